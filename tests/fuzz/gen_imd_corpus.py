#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
# Writes the seed corpora of fuzz_putrec.c, fuzz_auth.c and fuzz_httpmsg.c
# into tests/fuzz/corpus/{putrec,auth,httpmsg}/: upload bodies of one and
# several records, with the malformed variants the server must refuse;
# Authorization values valid in form and mistyped; request lines, header
# fields, chunk sizes and Content-Lengths, good and bad. Layouts:
# ferry-intermediary(7). Run it again after a change to a format.
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
