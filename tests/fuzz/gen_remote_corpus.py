#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
# Writes the seed corpora of fuzz_remote_fetch.c and fuzz_remote_json.c
# into tests/fuzz/corpus/{remote_fetch,remote_json}/: record streams of
# POST /v1/fetch (found, not found, timed out, busy, several in a row, cut
# and out of range) and the JSON bodies of ferry-intermediary(7) (valid
# and broken). Run it again after a change to either format.
import hashlib
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def b32(data):
    bits = int.from_bytes(data, "big") << ((5 - len(data) * 8 % 5) % 5)
    n = (len(data) * 8 + 4) // 5
    return "".join(CROCKFORD[(bits >> (5 * (n - 1 - i))) & 31]
                   for i in range(n))


def record(status, key, block=b""):
    return struct.pack(">IB", 33 + len(block), status) + key + block


def write(corpus, name, data):
    d = os.path.join(HERE, "corpus", corpus)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def fetch():
    block = bytes(range(256)) * 3
    key = hashlib.blake2b(block, digest_size=32).digest()
    found = record(0, key, block)
    seeds = {
        "found": found,
        "not_found": record(1, b"\x11" * 32),
        "timeout": record(2, b"\x22" * 32),
        "busy": record(3, b"\x33" * 32),
        "mixed": found + record(1, b"\x11" * 32) + record(0, key, block[:1]),
        "cut": found[:-5],
        "bad_status": record(4, b"\x44" * 32),
        "found_empty": record(0, b"\x55" * 32),
        "short_len": struct.pack(">IB", 32, 1) + b"\x66" * 32,
        "huge_len": struct.pack(">IB", 33 + 4 * 1024 * 1024 + 1, 0),
    }
    for name, data in seeds.items():
        for piece in (0, 6, 255):
            write("remote_fetch", "%s_%d" % (name, piece),
                  bytes([piece]) + data)


def js(o):
    return json.dumps(o).encode()


def bodies():
    peer = b32(b"\x01" * 32)
    other = b32(b"\x02" * 32)
    key, ph = b32(b"\x03" * 32), b32(b"\x04" * 32)
    sig = b32(b"\x05" * 64)
    imds = {"self": {"peer": peer, "url": "https://a.example:8443"},
            "intermediaries": [{"peer": other,
                                "url": "https://b.example:8443",
                                "expires": 1790000000}]}
    receipts = {"cursor": 8, "more": False, "entries": [
        {"cursor": 7, "type": "receipt", "key": key, "put_hash": ph,
         "storer": other, "expiry": 1790000000, "sig": sig},
        {"cursor": 8, "type": "done", "key": key, "put_hash": ph,
         "status": "ok", "receipts": 3}]}
    relays = {"relayed": 1, "refused": 1, "records": [
        {"key": key, "put_hash": ph, "status": "relayed"},
        {"key": key, "put_hash": ph, "status": "busy"}]}
    seeds = {
        "imds": (0, js(imds)),
        "imds_empty": (0, js({"self": imds["self"], "intermediaries": []})),
        "imds_http": (0, js({"self": imds["self"], "intermediaries": [
            dict(imds["intermediaries"][0], url="http://b:1")]})),
        "receipts": (1, js(receipts)),
        "receipts_none": (1, js({"cursor": 0, "more": False,
                                 "entries": []})),
        "receipts_order": (1, js(dict(receipts, entries=receipts[
            "entries"][::-1]))),
        "receipts_bigcursor": (1, b'{"cursor": 18446744073709551615, '
                                  b'"more": true, "entries": []}'),
        "relays": (2, js(relays)),
        "error": (3, js({"error": "stale", "message": "clock"})),
        # A token longer than the 15 characters the client keeps: refused
        # whole, never cut to a token it knows.
        "error_long": (3, js({"error": "too-large-for-this-intermediary",
                              "message": "a token past the client's"})),
        "trailing": (1, js(receipts) + b" {}"),
        "truncated": (1, js(receipts)[:-7]),
    }
    for name, (kind, data) in seeds.items():
        write("remote_json", name, bytes([kind]) + data)


fetch()
bodies()
