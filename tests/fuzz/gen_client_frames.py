#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
# Writes the seed corpus of fuzz_client_frames.c into
# tests/fuzz/corpus/client_frames/: valid frames of every client request
# (layouts of include/ferry/proto.h), a chunked SEND, and a few broken
# ones. Run it again after a protocol change.
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                   "corpus", "client_frames")


def frame(ftype, body):
    return struct.pack(">HH", 4 + len(body), ftype) + body


def req(ftype, req_id, body=b""):
    return frame(ftype, struct.pack(">I", req_id) + body)


def send(req_id, total, offset, data, app_type=0x0400):
    return req(0x0006, req_id, bytes(range(32)) +
               struct.pack(">HHII", app_type, 0, total, offset) + data)


def dht_put(req_id, total, offset, data, repl=3, expiry=0, r8=0, r16=0):
    return req(0x0011, req_id, struct.pack(">BBHQII", repl, r8, r16, expiry,
                                           total, offset) + data)


KEY = bytes(range(0x80, 0xa0))


SEEDS = {
    "status": req(0x0002, 1),
    "shutdown": req(0x0004, 2),
    "register": req(0x0005, 3, struct.pack(">HHH", 0x0400, 0x0401, 0xffff)),
    "register_empty": req(0x0005, 3),
    "send": send(0, 5, 0, b"hello"),
    "send_confirmed": send(4, 3, 0, b"abc"),
    "send_empty": send(0, 0, 0, b""),
    "send_chunked": (send(5, 10, 0, b"01234") + send(5, 10, 5, b"56789") +
                     req(0x0002, 6)),
    "peers": req(0x0008, 7),
    "hello": req(0x000a, 8),
    "connect": req(0x000c, 9, b"ferry://EXAMPLE"),
    "ping": req(0x000d, 10, bytes(32) + struct.pack(">IHHI", 3, 64, 0, 1000)),
    "stats": req(0x000f, 11),
    "unknown": req(0x7777, 12, b"xyz"),
    "pipeline": (req(0x0002, 13) + req(0x0005, 14, b"\x04\x00") +
                 send(0, 2, 0, b"hi") + req(0x000f, 15)),
    "bad_size": struct.pack(">HH", 2, 2),
    "bad_status_len": req(0x0002, 16, b"\x00"),
    "bad_chunk_gap": send(0, 10, 0, b"01234") + send(0, 10, 6, b"6789"),
    "too_large": send(0, 8 * 1024 * 1024 + 1, 0, b"x"),
    "dht_put": dht_put(20, 5, 0, b"block"),
    "dht_put_expiry": dht_put(21, 3, 0, b"abc", repl=1, expiry=2000000000),
    "dht_put_chunked": (dht_put(22, 10, 0, b"01234") +
                        dht_put(22, 10, 5, b"56789") + req(0x0017, 23)),
    "dht_put_reserved": dht_put(24, 2, 0, b"hi", r8=1, r16=0x0100),
    "dht_put_empty": dht_put(25, 0, 0, b""),
    "dht_put_too_large": dht_put(26, 4 * 1024 * 1024 + 1, 0, b"x"),
    "dht_put_bad_chunk": (dht_put(27, 10, 0, b"01234") +
                          dht_put(27, 10, 5, b"56789", repl=2)),
    "dht_put_then_send": dht_put(28, 10, 0, b"01234") + send(0, 2, 0, b"hi"),
    "dht_get": req(0x0013, 29, KEY),
    "dht_get_short": req(0x0013, 30, KEY[:31]),
    "dht_find": req(0x0015, 31, KEY + struct.pack(">HH", 20, 0)),
    "dht_find_long": req(0x0015, 32, KEY + struct.pack(">HHB", 8, 0, 0)),
    "dht_status": req(0x0017, 33),
    "dht_pipeline": (req(0x0017, 34) + dht_put(35, 1, 0, b"x") +
                     req(0x0013, 36, KEY) +
                     req(0x0015, 37, KEY + struct.pack(">HH", 1, 0))),
    "file_put": req(0x0019, 40, struct.pack(">BBHI", 0, 0, 0, 250) + b"a.txt"),
    "file_put_nolabel": req(0x0019, 41, struct.pack(">BBHI", 3, 0, 0, 0)),
    "file_put_nul": req(0x0019, 42, struct.pack(">BBHI", 0, 0, 0, 0) + b"a\0b"),
    "file_get": req(0x001a, 43, struct.pack(">II", 250, 0) +
                    b"ferry:f1.5.0123456789ABCDEFGHJKMNPQRSTVWXYZ"),
    "file_get_empty": req(0x001a, 44, struct.pack(">II", 0, 0)),
    "transfers": req(0x001d, 45),
    "cancel": req(0x001f, 46, struct.pack(">Q", 0x0102030405060708)),
    "cancel_short": req(0x001f, 47, b"\x01"),
}

os.makedirs(OUT, exist_ok=True)
for name, data in SEEDS.items():
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
