#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
# Writes the seed corpus of fuzz_client_replies.c into
# tests/fuzz/corpus/client_replies/: for each libferry call the target
# makes, the daemon's replies as ferry-client(7) and <ferry/proto.h> lay
# them out (signed DHT receipts included), and some truncated, oversized
# and out-of-order ones. A seed is the call's number (FUZZ_OP_* in the
# target), its argument byte, then the daemon's byte stream. Run it again
# after a protocol change.
import hashlib
import os
import struct

from cryptography.hazmat.primitives.asymmetric.ed25519 import \
    Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import \
    Encoding, PublicFormat

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                   "corpus", "client_replies")

(STATUS, PEERS, STATS, HELLO, DHT_PUT, DHT_GET, DHT_FIND, DHT_STATUS,
 TRANSFERS, FILE_PUT, FILE_GET, DHT_ASYNC, RECEIVE, PING, RESULT) = range(15)

EIO, ENOENT, ENOSPC, ENOTCONN, EHOSTUNREACH, ECANCELED = 5, 2, 28, 107, \
    113, 125

BLOCK = b"ferry fuzz block\n"  # fuzz_block in the target


def blake(data):
    return hashlib.blake2b(data, digest_size=32).digest()


KEY = blake(BLOCK)


def frame(ftype, body):
    return struct.pack(">HH", 4 + len(body), ftype) + body


def reply(ftype, req_id, body=b""):
    return frame(ftype, struct.pack(">I", req_id) + body)


def result(req_id, status=0, msg=b""):
    return reply(0x0001, req_id, struct.pack(">i", status) + msg)


def seed(op, arg, *frames):
    return bytes([op, arg]) + b"".join(frames)


def peer(n):
    return bytes([n]) * 32


def status(req_id, version=b"0.1.0", transports=(), extra=b"", n=None):
    body = peer(1) + struct.pack(">QHH", 123456, len(transports)
                                 if n is None else n, len(version)) + version
    for proto, name, mtu, cost in transports:
        body += struct.pack(">HHII", proto, len(name), mtu, cost) + name
    return reply(0x0003, req_id, body + extra)


def peer_frame(req_id, n, transport, address, tlen=None):
    return reply(0x0009, req_id, peer(n) + struct.pack(
        ">QHH", 5000, 1, len(transport) if tlen is None else tlen) +
        transport + address)


def stat(req_id, value, name):
    return reply(0x0010, req_id, struct.pack(">Q", value) + name)


def receipt(seed_byte, key=KEY, expiry=2000000000):
    sk = Ed25519PrivateKey.from_private_bytes(bytes([seed_byte]) * 32)
    pk = sk.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    put_hash = bytes([seed_byte ^ 0xff]) * 32
    sig = sk.sign(b"ferry dht receipt v1\0" + key + pk +
                  struct.pack(">Q", expiry) + put_hash)
    return blake(pk) + struct.pack(">Q", expiry) + put_hash + pk + sig


def stored(req_id, receipts, key=KEY, count=None, repl=3):
    return reply(0x0012, req_id, key + struct.pack(
        ">BBH", len(receipts) if count is None else count, repl, 0) +
        b"".join(receipts))


def block(req_id, total, offset, data):
    return reply(0x0014, req_id, struct.pack(">II", total, offset) + data)


def node(req_id, n):
    return reply(0x0016, req_id, peer(n))


def bpcc_section(peers, m=None):
    body = struct.pack(">IIIIII", 64, 2000, 3, 1, 1, 0)
    body += struct.pack(">QQQQQQ", 10, 9, 1, 2, 3, 4)
    body += struct.pack(">HH", len(peers) if m is None else m, 0)
    for n, depth, blocked_ms, flags in peers:
        body += peer(n) + struct.pack(">IIB3x", depth, blocked_ms, flags)
    return struct.pack(">HH", 1, len(body)) + body


def cc_section(scheme=2):
    body = struct.pack(">BBHIIIIIII", scheme, 0, 0, 2, 5, 12500, 64000,
                       30000, 200000, 0)
    body += struct.pack(">QQQQQ", 7, 3, 1, 0, 2)
    return struct.pack(">HH", 2, len(body)) + body


def dht_status(req_id, buckets=(), sections=b"", n=None):
    body = struct.pack(">HHIIIQQQHH", 20, 3, 40, 2, 7, 100, 409600,
                       1 << 30, len(buckets) if n is None else n, 0)
    for prefix, entries in buckets:
        body += struct.pack(">HH", prefix, entries)
    return reply(0x0018, req_id, body + sections)


def transfer(req_id, tid, kind, label):
    return reply(0x001e, req_id, struct.pack(
        ">QBBHIQQQ", tid, kind, 1, 0, 1000, 4096, 1 << 20, 1700000000) +
        label)


def progress(req_id, tid, done, total):
    return reply(0x001b, req_id, struct.pack(
        ">QQQQQQIIII", tid, done, total, done // 4096, total // 4096,
        65536, 4, 16, 3, 0))


URI = b"ferry:f1.5.0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def done(req_id, tid, size, uri=URI):
    return reply(0x001c, req_id, struct.pack(">QQQQ", tid, size, 3, 0) +
                 bytes(range(16)) + uri)


def receive(n, app_type, total, offset, data):
    return frame(0x0007, peer(n) + struct.pack(">HHII", app_type, 0, total,
                                               offset) + data)


def pong(req_id, count):
    return reply(0x000e, req_id, struct.pack(">IQQQ", count, 3000 * count,
                                             2000, 4000))


TRANSPORTS = ((1, b"udp", 1400, 10), (2, b"tcp", 65000, 20))
SECTIONS = bpcc_section(((3, 5, 120, 1), (4, 0, 0, 4))) + cc_section()

SEEDS = {
    # The frame layer under every reply.
    "frame_size_too_small": seed(STATUS, 0, struct.pack(">HH", 3, 3)),
    "frame_truncated": seed(STATUS, 0, status(1, transports=TRANSPORTS)[:40]),
    "frame_claims_64k": seed(HELLO, 0, struct.pack(">HHI", 65535, 0x000b, 1) +
                             b"ferry://" * 16),
    "frame_header_only": seed(STATUS, 0, struct.pack(">HH", 4, 1)),
    "frame_late_replies": seed(STATUS, 0, result(7), reply(0x0016, 8,
                               peer(2)), status(1)),
    "result_short": seed(STATUS, 0, reply(0x0001, 1, b"\0\0")),
    "result_positive": seed(STATUS, 0, result(1, 5)),
    # STATUS
    "status": seed(STATUS, 0, status(1, transports=TRANSPORTS)),
    "status_no_transports": seed(STATUS, 0, status(1)),
    "status_result0": seed(STATUS, 0, result(1)),
    "status_error": seed(STATUS, 0, result(1, -EIO, b"the daemon broke")),
    "status_trailing": seed(STATUS, 0, status(1, extra=b"x")),
    "status_bad_version_len": seed(STATUS, 0, reply(0x0003, 1, peer(1) +
                                   struct.pack(">QHH", 1, 0, 200) + b"0.1")),
    "status_bad_transport": seed(STATUS, 0, status(
        1, extra=struct.pack(">HHII", 1, 9, 1400, 10) + b"udp", n=1)),
    "status_many_transports": seed(STATUS, 0, reply(
        0x0003, 1, peer(1) + struct.pack(">QHH", 1, 0xffff, 0))),
    "status_after_receive": seed(STATUS, 0, receive(9, 0x0400, 3, 0, b"abc"),
                                 status(1, transports=TRANSPORTS)),
    # PEERS
    "peers": seed(PEERS, 0, peer_frame(1, 2, b"udp", b"192.0.2.1:2086"),
                  peer_frame(1, 3, b"tcp", b"[2001:db8::1]:2086"), result(1)),
    "peers_none": seed(PEERS, 0, result(1)),
    "peers_long_strings": seed(PEERS, 0, peer_frame(1, 2, b"t" * 40,
                                                    b"a" * 300), result(1)),
    "peers_bad_tlen": seed(PEERS, 0, peer_frame(1, 2, b"udp", b"", tlen=9),
                           result(1)),
    "peers_wrong_type": seed(PEERS, 0, stat(1, 1, b"x"), result(1)),
    # STATS
    "stats": seed(STATS, 0, stat(1, 12, b"core.peers"),
                  stat(1, 1 << 40, b"udp.bytes_out"), stat(1, 0, b""),
                  result(1)),
    "stats_long_name": seed(STATS, 0, stat(1, 3, b"n" * 8000), result(1)),
    "stats_short": seed(STATS, 0, reply(0x0010, 1, b"\0\0\0"), result(1)),
    # HELLO
    "hello": seed(HELLO, 0, reply(0x000b, 1, b"ferry://ABCDEFGH")),
    "hello_empty": seed(HELLO, 0, reply(0x000b, 1)),
    "hello_result0": seed(HELLO, 0, result(1)),
    # DHT_PUT
    "dht_put": seed(DHT_PUT, 2, stored(1, [receipt(1), receipt(2)], repl=2),
                    result(1)),
    "dht_put_eio": seed(DHT_PUT, 3, stored(1, [receipt(1)]), result(1, -EIO)),
    "dht_put_none": seed(DHT_PUT, 3, stored(1, []),
                         result(1, -ENOSPC, b"full")),
    "dht_put_no_stored": seed(DHT_PUT, 3, result(1)),
    "dht_put_bad_receipt": seed(DHT_PUT, 1, stored(1, [receipt(1)[:-1] +
                                                       b"\0"]), result(1)),
    "dht_put_other_key": seed(DHT_PUT, 1, stored(1, [receipt(1)],
                                                 key=peer(7)), result(1)),
    "dht_put_bad_count": seed(DHT_PUT, 1, stored(1, [receipt(1)], count=2),
                              result(1)),
    "dht_put_too_many": seed(DHT_PUT, 1, stored(1, [], count=17), result(1)),
    "dht_put_twice": seed(DHT_PUT, 1, stored(1, [receipt(1)]),
                          stored(1, [receipt(2)]), result(1)),
    # DHT_GET
    "dht_get": seed(DHT_GET, 0, block(1, len(BLOCK), 0, BLOCK), result(1)),
    "dht_get_pieces": seed(DHT_GET, 0, block(1, len(BLOCK), 0, BLOCK[:5]),
                           block(1, len(BLOCK), 5, BLOCK[5:]), result(1)),
    "dht_get_other_block": seed(DHT_GET, 0, block(1, 3, 0, b"abc"),
                                result(1)),
    "dht_get_empty": seed(DHT_GET, 0, block(1, 0, 0, b""), result(1)),
    "dht_get_short": seed(DHT_GET, 0, block(1, len(BLOCK), 0, BLOCK[:5]),
                          result(1)),
    "dht_get_gap": seed(DHT_GET, 0, block(1, len(BLOCK), 0, BLOCK[:5]),
                        block(1, len(BLOCK), 6, BLOCK[6:]), result(1)),
    "dht_get_too_large": seed(DHT_GET, 0, block(1, 4 * 1024 * 1024 + 1, 0,
                                                b"x"), result(1)),
    "dht_get_over": seed(DHT_GET, 0, block(1, 4, 0, b"abcdef"), result(1)),
    "dht_get_enoent": seed(DHT_GET, 0, result(1, -ENOENT, b"no holder")),
    # DHT_FIND (argument 3: want 4)
    "dht_find": seed(DHT_FIND, 3, node(1, 2), node(1, 3), node(1, 4),
                     result(1)),
    "dht_find_too_many": seed(DHT_FIND, 0, node(1, 2), node(1, 3),
                              result(1)),
    "dht_find_bad_node": seed(DHT_FIND, 3, reply(0x0016, 1, peer(2) + b"x"),
                              result(1)),
    "dht_find_unreachable": seed(DHT_FIND, 31, result(1, -EHOSTUNREACH)),
    # DHT_STATUS, its buckets and sections
    "dht_status": seed(DHT_STATUS, 0, dht_status(1, ((0, 3), (1, 20), (7, 1)),
                                                 SECTIONS)),
    "dht_status_plain": seed(DHT_STATUS, 0, dht_status(1, ((0, 3),))),
    "dht_status_cc_only": seed(DHT_STATUS, 0, dht_status(1, (),
                                                         cc_section(1))),
    "dht_status_unknown_section": seed(DHT_STATUS, 0, dht_status(
        1, (), struct.pack(">HH", 9, 3) + b"abc" + cc_section(0))),
    "dht_status_section_overrun": seed(DHT_STATUS, 0, dht_status(
        1, (), struct.pack(">HH", 2, 200) + b"abc")),
    "dht_status_section_short": seed(DHT_STATUS, 0, dht_status(1, (), b"\0")),
    "dht_status_two_cc": seed(DHT_STATUS, 0, dht_status(
        1, (), cc_section() + cc_section())),
    "dht_status_bad_bpcc": seed(DHT_STATUS, 0, dht_status(
        1, (), bpcc_section(((3, 5, 120, 1),), m=2))),
    "dht_status_bad_n": seed(DHT_STATUS, 0, dht_status(1, ((0, 3),), n=9)),
    # TRANSFERS
    "transfers": seed(TRANSFERS, 0, transfer(1, 1, 1, b"report.pdf"),
                      transfer(1, 2, 2, URI), result(1)),
    "transfers_none": seed(TRANSFERS, 0, result(1)),
    "transfers_short": seed(TRANSFERS, 0, reply(0x001e, 1, b"\0" * 20),
                            result(1)),
    # FILE_PUT and FILE_GET (argument: progress_ms)
    "file_put": seed(FILE_PUT, 1, progress(1, 5, 4096, 1 << 20),
                     progress(1, 5, 8192, 1 << 20), done(1, 5, 1 << 20),
                     result(1)),
    "file_put_quiet": seed(FILE_PUT, 0, progress(1, 5, 4096, 1 << 20),
                           done(1, 5, 1 << 20), result(1)),
    "file_put_no_done": seed(FILE_PUT, 1, progress(1, 5, 0, 10), result(1)),
    "file_put_cancelled": seed(FILE_PUT, 1, progress(1, 5, 0, 10),
                               result(1, -ECANCELED, b"cancelled")),
    "file_put_long_uri": seed(FILE_PUT, 1, done(1, 5, 10, b"u" * 300),
                              result(1)),
    "file_put_two_done": seed(FILE_PUT, 1, done(1, 5, 10), done(1, 5, 10),
                              result(1)),
    "file_put_bad_progress": seed(FILE_PUT, 1, reply(0x001b, 1, b"\0" * 60),
                                  result(1)),
    "file_get": seed(FILE_GET, 1, progress(1, 6, 0, 4096),
                     receive(2, 0x0400, 2, 0, b"hi"), done(1, 6, 4096),
                     result(1)),
    "file_get_error": seed(FILE_GET, 1, result(1, -ENOENT, b"no manifest")),
    # Asynchronous DHT requests. Argument: bits 0-1 requests - 1, bits
    # 2-3 and 4-5 the kinds of the first two (0 PUT, 1 GET, 2 FIND 4,
    # 3 FIND 32), the rest as the second; bit 6 a DHT_STATUS meanwhile.
    "async_put_get": seed(DHT_ASYNC, 1 | 0 << 2 | 1 << 4,
                          block(2, len(BLOCK), 0, BLOCK[:7]),
                          stored(1, [receipt(3)], repl=1),
                          block(2, len(BLOCK), 7, BLOCK[7:]),
                          result(1), result(2)),
    "async_find": seed(DHT_ASYNC, 0 | 2 << 2, node(1, 2), node(1, 3),
                       result(1)),
    "async_three": seed(DHT_ASYNC, 2 | 1 << 2 | 3 << 4, node(3, 4),
                        result(2, -ENOENT), node(3, 5),
                        block(1, len(BLOCK), 0, BLOCK), result(3),
                        result(1)),
    "async_with_status": seed(DHT_ASYNC, 0x40 | 1 | 3 << 2 | 1 << 4,
                              node(1, 2), block(2, len(BLOCK), 0, BLOCK),
                              dht_status(3, ((0, 3),), cc_section()),
                              result(1), result(2)),
    "async_bad_reply": seed(DHT_ASYNC, 0 | 1 << 2, node(1, 2), result(1)),
    "async_late": seed(DHT_ASYNC, 0 | 2 << 2, result(9), node(1, 2),
                       result(1), result(1)),
    # RECEIVE: whole, chunked, empty, broken
    "receive": seed(RECEIVE, 0, receive(2, 0x0400, 5, 0, b"hello"),
                    receive(3, 0x0401, 0, 0, b""),
                    receive(2, 0x0400, 6, 0, b"abc"),
                    receive(2, 0x0400, 6, 3, b"def")),
    "receive_bad_piece": seed(RECEIVE, 0, receive(2, 0x0400, 6, 0, b"abc"),
                              receive(3, 0x0400, 6, 3, b"def")),
    "receive_over": seed(RECEIVE, 0, receive(2, 0x0400, 2, 0, b"abc")),
    "receive_short": seed(RECEIVE, 0, frame(0x0007, peer(2))),
    "receive_too_large": seed(RECEIVE, 0, receive(2, 0x0400,
                                                  8 * 1024 * 1024 + 1, 0,
                                                  b"x")),
    # PING
    "ping": seed(PING, 2, pong(1, 3)),
    "ping_result0": seed(PING, 0, result(1)),
    "ping_bad_pong": seed(PING, 0, reply(0x000e, 1, b"\0" * 27)),
    "ping_unreachable": seed(PING, 0, result(1, -EHOSTUNREACH, b"no link")),
    # Calls answered by RESULT alone (argument: which)
    "register": seed(RESULT, 0, result(1)),
    "connect": seed(RESULT, 1, result(1, -EHOSTUNREACH, b"bad HELO")),
    "cancel": seed(RESULT, 2, result(1, -ENOENT, b"no such transfer")),
    "send_confirmed": seed(RESULT, 3, result(1, -ENOTCONN, b"no link")),
    "shutdown": seed(RESULT, 4, result(1)),
    "result_unexpected_reply": seed(RESULT, 0, reply(0x000b, 1, b"x")),
    "result_long_message": seed(RESULT, 1, result(1, -EIO, b"m" * 600)),
}

os.makedirs(OUT, exist_ok=True)
for name, data in SEEDS.items():
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
