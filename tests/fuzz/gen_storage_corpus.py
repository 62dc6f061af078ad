#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
# Writes the seed corpora of fuzz_manifest.c and fuzz_uri.c into
# tests/fuzz/corpus/{manifest,uri}/: manifests of 0, 1, 13, 14, 200 and
# 2549 chunks of 1 KiB shaped as ferry's builder shapes them (1 to 4
# levels, nodes of at most 1 KiB) and chains of one-entry nodes 2 to 17
# levels deep, each followed by the malformed variants
# the reader must refuse; URIs valid and mistyped. Layouts: ferry-storage(7).
# Run it again after a change to either format.
import base64
import os
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
CS = 1024
HDR, ROOT, ENTRY = 8, 36, 72
F, R = (CS - HDR) // ENTRY, (CS - ROOT) // ENTRY
CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def ref(tag):
    return bytes([tag & 0xFF]) * 32 + bytes([(tag * 7) & 0xFF]) * 32


def node(level, entries, root=None):
    out = struct.pack(">BBBBI", 1, level, 1 if root else 0, 0, len(entries))
    if root:
        out += struct.pack(">QI", root[0], CS) + bytes(range(16))
    for tag, length, _ in entries:
        out += ref(tag) + struct.pack(">Q", length)
    return out


def tree(size):
    """Nodes of the manifest of a file of size bytes, in the order a
    reader asks for them (depth first)."""
    lens = [CS] * (size // CS) + ([size % CS] if size % CS else [])
    entries = [(i, n, None) for i, n in enumerate(lens)]
    level = 0
    while len(entries) > R:
        nxt = []
        for i in range(0, len(entries), F):
            group = entries[i:i + F]
            nxt.append((1000 + len(nxt), sum(e[1] for e in group),
                        (level, group)))
        entries, level = nxt, level + 1
    out = []

    def walk(lvl, group, root):
        out.append(node(lvl, group, (size,) if root else None))
        for _, _, child in group:
            if child:
                walk(child[0], child[1], False)
    walk(level, entries, True)
    return out


def frame(size, nodes, m=0):
    data = struct.pack(">BQ", m, size)
    for n in nodes:
        data += struct.pack(">H", len(n)) + n
    return data


def write(corpus, name, data):
    d = os.path.join(HERE, "corpus", corpus)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def chain(depth, size):
    """A file of one chunk under depth levels of one-entry nodes: valid,
    though not the shape the builder makes, and small enough to fuzz."""
    nodes = [node(depth - 1, [(1, size, None)], (size,))]
    for lvl in range(depth - 2, -1, -1):
        nodes.append(node(lvl, [(2 + lvl, size, None)]))
    return nodes


def manifests():
    for depth in (2, 3, 16, 17):
        write("manifest", "chain-%d" % depth, frame(100, chain(depth, 100),
                                                    depth % 4))
    for chunks, extra in ((0, 0), (0, 1), (13, 0), (14, 5), (200, 0),
                          (2549, 0)):
        size = chunks * CS + extra
        nodes = tree(size)
        name = "ok-%d" % size
        if len(frame(size, nodes)) <= 8192:
            write("manifest", name, frame(size, nodes))
        else:  # past -max_len: the first nodes only
            write("manifest", name, frame(size, nodes[:6]))
        root = bytearray(nodes[0])
        bad = {
            "truncated": bytes(root[:-1]),
            "version2": bytes([2]) + bytes(root[1:]),
            "noroot": bytes(root[:2]) + b"\0" + bytes(root[3:]),
            "size": bytes(root[:8]) + struct.pack(">Q", size + 1) +
            bytes(root[16:]),
            "count": bytes(root[:4]) + struct.pack(">I", 0xFFFFFFFF) +
            bytes(root[8:]),
        }
        for what, b in bad.items():
            write("manifest", "%s-%s" % (what, name),
                  frame(size, [b] + nodes[1:3]))
        if len(nodes) > 1:
            child = bytearray(nodes[1])
            child[1] = nodes[0][1]  # the parent's level: a loop
            write("manifest", "loop-" + name,
                  frame(size, [nodes[0], bytes(child)]))


def b32(data):
    bits = "".join("{:08b}".format(b) for b in data)
    bits += "0" * (-len(bits) % 5)
    return "".join(CROCKFORD[int(bits[i:i + 5], 2)]
                   for i in range(0, len(bits), 5))


def uri(size, block, key):
    check = zlib.crc32(b"ferry:f1" + struct.pack(">Q", size) + block + key)
    return "ferry:f1.%d.%s" % (size, b32(block + key +
                                          struct.pack(">I", check)))


def uris():
    good = [uri(0, bytes(32), bytes(32)),
            uri(1048576, bytes(range(32)), bytes(range(32, 64))),
            uri(1 << 48, b"\xff" * 32, b"\xee" * 32)]
    for i, u in enumerate(good):
        write("uri", "ok-%d" % i, u.encode())
        write("uri", "lower-%d" % i, u.lower().encode())
        write("uri", "typo-%d" % i, (u[:-3] + ("0" if u[-3] != "0" else "1")
                                     + u[-2:]).encode())
        write("uri", "short-%d" % i, u[:-1].encode())
    write("uri", "peer", b"ferry://GKV1@udp:127.0.0.1:2086")
    write("uri", "version", good[1].replace("f1.", "f2.").encode())
    write("uri", "size", good[1].replace(".1048576.", ".01048576.").encode())


manifests()
uris()
