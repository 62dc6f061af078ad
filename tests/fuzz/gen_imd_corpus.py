#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
# Writes the seed corpora of fuzz_putrec.c, fuzz_auth.c, fuzz_httpmsg.c and
# fuzz_fedmsg.c into tests/fuzz/corpus/{putrec,auth,httpmsg,fedmsg}/: upload
# bodies of one and several records, with the malformed variants the server
# must refuse; Authorization values valid in form and mistyped; request
# lines, header fields, chunk sizes and Content-Lengths, good and bad; the
# federation's announcements and messages, good and bad. Layouts:
# ferry-intermediary(7), ferry-protocol(7). Run it again after a change to a
# format.
import hashlib
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def b32(data):
    bits, acc, out = 0, 0, ""
    for byte in data:
        acc = (acc << 8) | byte
        bits += 8
        while bits >= 5:
            bits -= 5
            out += CROCKFORD[(acc >> bits) & 31]
    if bits:
        out += CROCKFORD[(acc << (5 - bits)) & 31]
    return out


def record(block, repl=3, expiry=1900000000, version=1):
    return struct.pack(">IBBQ", 74 + len(block), version, repl, expiry) + \
        bytes(range(64)) + block


def write(sub, items):
    d = os.path.join(HERE, "corpus", sub)
    os.makedirs(d, exist_ok=True)
    for data in items:
        name = hashlib.sha1(data).hexdigest()
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)


putrec = [
    record(b"x"),
    record(b"block" * 100),
    record(b"a" * 4096),
    record(b"a" * 4097),                     # over MAX_BLOCK
    record(b"abc") + record(b"defg") + record(b"h" * 300),
    record(b"abc", version=2),
    record(b"abc", repl=0) + record(b"q", repl=17),
    struct.pack(">I", 74) + b"\x01" * 74,    # len under 75
    record(b"tail")[:-2],                    # ends inside a record
    b"\x00\x00",
    b"\xff\xff\xff\xff" + b"\x01" * 80,
]
write("putrec", putrec)

client, nonce, sig = b32(bytes(32)), b32(bytes(range(16))), b32(bytes(64))
auth = [
    f"Ferry {client}:1764150000:{nonce}:{sig}",
    f"ferry {client.lower()}:0:{nonce}:{sig}",
    f"Ferry {client}:99999999999999999999:{nonce}:{sig}",
    f"Ferry {client}:1764150000:{nonce}:{sig}:extra",
    f"Ferry {client}:1764150000:{nonce}",
    f"Ferry {client[:-1]}:1764150000:{nonce}:{sig}",
    f"Ferry {client}:-5:{nonce}:{sig}",
    f"Bearer {client}",
    "Ferry ",
    "Ferry :::",
]
write("auth", [a.encode() for a in auth])

http = [b"\x00" + line for line in [
    b"GET /v1/intermediaries HTTP/1.1",
    b"POST /v1/blocks HTTP/1.0",
    b"GET /v1/receipts?after=0&wait=30 HTTP/1.1",
    b"GET http://x/ HTTP/1.1",
    b"get / HTTP/1.1",
    b"GET / HTTP/2.0",
    b"GET  / HTTP/1.1",
    b"GET /\x7f HTTP/1.1",
]] + [b"\x01" + line for line in [
    b"Host: example",
    b"Authorization:   Ferry abc  ",
    b"Content-Length:",
    b"Bad Name: x",
    b": novalue",
    b"X: a\rb",
    b"X-Obs: caf\xc3\xa9",
]] + [b"\x02" + line for line in [
    b"0", b"1a", b"FFFF;ext=1", b"ffffffffffffffffff", b"", b"12 ;x", b"z",
]] + [b"\x03" + line for line in [
    b"0", b"1048576", b"99999999999999999999", b"-1", b"12a", b"",
]]
write("httpmsg", http)

# fuzz_fedmsg.c: a selector byte (0 announcement, 1 HERE, 2 ENTRIES,
# 3 ACK), then the bytes of ferry-protocol(7) INTERMEDIARY MESSAGES.
url = b"https://a.example:8443"
helo = struct.pack(">HH", 4 + 32 + 16 + 7 + 64, 1) + bytes(32) + \
    struct.pack(">HHIQ", 1, 7, 1452, 1900000000) + bytes(7) + bytes(64)
target = b"/v1/receipts?after=0&wait=30"


def here(tl=None, version=1, tgt=target):
    return struct.pack(">BBH", version, 0, len(tgt) if tl is None else tl) \
        + bytes(range(32)) + struct.pack(">Q", 1767225600) + \
        bytes(range(16)) + bytes(64) + tgt


def entry(cursor):
    return struct.pack(">Q", cursor) + b"\x11" * 64 + b"\x22" * 32 + \
        struct.pack(">Q", 1800000000) + b"\x33" * 64


def entries(*es, n=None):
    return struct.pack(">BBH", 1, 0, len(es) if n is None else n) + \
        bytes(range(32)) + b"".join(es)


def ack(status=0, cursor=2):
    return struct.pack(">BBH", 1, status, 0) + bytes(range(32)) + \
        struct.pack(">Q", cursor)


fedmsg = [b"\x00" + v for v in [
    bytes([1, len(url)]) + url,
    bytes([1, len(url)]) + url + helo,
    bytes([1, len(url)]) + url + helo[:-1],
    bytes([2, len(url)]) + url,
    bytes([1, 0]),
    bytes([1, 5]) + b'ab"cd',
]] + [b"\x01" + v for v in [
    here(), here(tl=27), here(version=2), here(tgt=b"/v1/blocks"),
    here(tgt=b"/v1/receiptsX"), here(tgt=b"/v1/receipts"),
]] + [b"\x02" + v for v in [
    entries(entry(1), entry(3)),
    entries(*[entry(i + 1) for i in range(64)]),
    entries(entry(2), entry(2)),
    entries(entry(0)),
    entries(entry(1 << 63)),
    entries(entry(1), n=2),
    entries(),
]] + [b"\x03" + v for v in [
    ack(), ack(3, 0), ack(4), ack(cursor=1 << 63), ack()[:-1],
]]
write("fedmsg", fedmsg)
