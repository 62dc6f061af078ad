#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
# Writes the seed corpus of fuzz_pingpong.c into tests/fuzz/corpus/pingpong/:
# PINGs and PONGs in the layouts of include/ferry/proto.h, the PONGs signed
# by the target's fixed identity (Ed25519 seed of 32 bytes 0xb0), plus the
# malformed cases the decoders must refuse. Needs python3-cryptography;
# run it again after a change to either layout.
import os
import struct

from cryptography.hazmat.primitives.asymmetric.ed25519 import \
    Ed25519PrivateKey

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                   "corpus", "pingpong")
PING, PONG = 0x0002, 0x0003
UDP, TCP, SMTP = 1, 2, 3
CHALLENGE_LEN, SIG_LEN, PONG_FIXED = 16, 64, 32 + 64
ADDR_MAX = 255
NOW_S = 1700000000
KEY = Ed25519PrivateKey.from_private_bytes(b"\xb0" * 32)
TARGET = bytes(range(32))
CHAL = bytes(range(0x40, 0x40 + CHALLENGE_LEN))
UDP4 = bytes([127, 0, 0, 1, 0x08, 0x26])
TCP6 = bytes(15) + b"\x01" + b"\x1f\x90"
MAIL = b"ferry@example.org"


def ping(proto, addr, pad=True, extra=0):
    body = TARGET + CHAL + struct.pack(">HH", proto, len(addr)) + addr
    size = 4 + len(body)
    if pad:
        size = max(size, PONG_FIXED + len(addr)) + extra
    return struct.pack(">HH", size, PING) + body + bytes(size - 4 - len(body))


def pong(proto, addr, expiry=NOW_S + 600, chal=CHAL, addr_len=None):
    alen = len(addr) if addr_len is None else addr_len
    size = PONG_FIXED + len(addr)
    signed = struct.pack(">HH", size, PONG) + chal + \
        struct.pack(">HHQ", proto, alen, expiry) + addr
    return signed + KEY.sign(b"ferry pong v1\0" + signed)


SEEDS = {
    "ping_udp4": ping(UDP, UDP4),
    "ping_tcp6": ping(TCP, TCP6),
    "ping_addr_max": ping(SMTP, b"a" * ADDR_MAX),
    "ping_extra_pad": ping(UDP, UDP4, extra=8),
    "ping_unpadded": ping(UDP, UDP4, pad=False),
    "pong_udp4": pong(UDP, UDP4),
    "pong_smtp": pong(SMTP, MAIL),
    "pong_addr_max": pong(SMTP, b"b" * ADDR_MAX),
    "pong_expired": pong(UDP, UDP4, expiry=NOW_S - 1),
    "pong_bad_challenge": pong(UDP, UDP4, chal=bytes(CHALLENGE_LEN)),
    "pong_addr_len_zero": pong(UDP, UDP4, addr_len=0),
}

os.makedirs(OUT, exist_ok=True)
for name, data in SEEDS.items():
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
