#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Writes the seed corpora of fuzz_smtp_mail, fuzz_base64 and
fuzz_smtp_addr (tests/fuzz/corpus/{smtp_mail,base64,smtp_addr}/): ferry
mails in the format of plugins/smtp/smtp_mime.h as composed (CRLF) and as
Postfix + procmail deliver them (LF, From line, MTA headers), FIFO streams
of several mails, foreign mail, broken MIME, bad base64 and envelopes;
base64 texts; HELO addresses. Deterministic: rerun it after a format
change and commit what changes.

Usage: tests/fuzz/gen_smtp_corpus.py [CORPUS_DIR]  (default: beside this file)
"""
import base64
import os
import struct
import sys

FILTER = "X-Ferry-Test: fuzz"
TOKEN = "0123456789abcdef0123456789abcdef"


def envelope(unit, sender=b"\x5a" * 32, enc=True, crc=0x1234abcd,
             version=1, flags=None, length=None):
    if flags is None:
        flags = 1 if enc else 0
    if length is None:
        length = len(unit)
    return struct.pack(">BBHII", version, flags, 0, crc, length) + sender + unit


def b64_lines(data):
    text = base64.b64encode(data).decode()
    return "".join(text[i:i + 76] + "\r\n" for i in range(0, len(text), 76))


def ferry_mail(unit, filt=FILTER, body=None, **kw):
    if body is None:
        body = b64_lines(envelope(unit, **kw))
    return (
        "Date: Fri, 22 Nov 2024 10:47:06 +0000\r\n"
        "From: Mail Delivery System <MAILER-DAEMON@example.org>\r\n"
        "To: <peer1@localhost>\r\n"
        "Subject: Undelivered Mail Returned to Sender\r\n"
        f"Message-ID: <{TOKEN}@example.org>\r\n"
        "MIME-Version: 1.0\r\n"
        "Auto-Submitted: auto-replied\r\n"
        f"{filt}\r\n"
        "Content-Type: multipart/report; report-type=delivery-status;\r\n"
        f"\tboundary=\"{TOKEN}\"\r\n"
        "\r\n"
        "This is a MIME-encapsulated message.\r\n"
        "\r\n"
        f"--{TOKEN}\r\n"
        "Content-Description: Notification\r\n"
        "Content-Type: text/plain; charset=us-ascii\r\n"
        "\r\n"
        "The mail system at example.org could not deliver the attached message.\r\n"
        "\r\n"
        f"--{TOKEN}\r\n"
        "Content-Description: Delivery report\r\n"
        "Content-Type: message/delivery-status\r\n"
        "\r\n"
        "Reporting-MTA: dns; example.org\r\n"
        "Arrival-Date: Fri, 22 Nov 2024 10:47:06 +0000\r\n"
        "\r\n"
        "Final-Recipient: rfc822; peer1@localhost\r\n"
        "Action: failed\r\n"
        "Status: 5.0.0\r\n"
        "\r\n"
        f"--{TOKEN}\r\n"
        "Content-Description: Undelivered Message\r\n"
        "Content-Type: application/octet-stream\r\n"
        "Content-Transfer-Encoding: base64\r\n"
        "\r\n"
        f"{body}"
        f"--{TOKEN}--\r\n"
    )


def delivered(mail):
    """As procmail hands it on: LF, an mbox From line, the MTA's headers."""
    top = ("From MAILER-DAEMON  Sat Nov 22 11:27:20 2025\n"
           "Return-Path: <>\n"
           "X-Original-To: peer1@localhost\n"
           "Delivered-To: peer1@localhost\n"
           "Received: from vm (localhost [127.0.0.1])\n"
           "\tby vm (Postfix) with ESMTP id E9CB8BA6E4\n"
           "\tfor <peer1@localhost>; Sat, 22 Nov 2025 11:27:17 +0000 (UTC)\n")
    return top + mail.replace("\r\n", "\n") + "\n"


FOREIGN = ("From someone@example.net Sat Nov 22 11:00:00 2025\n"
           "From: someone@example.net\nTo: peer1@localhost\n"
           f"{FILTER}\nSubject: not MIME\n\n"
           "a body with\n\nFrom the first line after a blank\n\n")


def mail_seeds():
    unit = bytes(range(256)) * 3
    good = ferry_mail(unit)
    small = ferry_mail(b"x", enc=False, crc=0)
    seeds = {
        "composed.eml": good,
        "composed-small.eml": small,
        "delivered.eml": delivered(good),
        "stream-three.mbox": "junk before\n" + delivered(small) +
        FOREIGN + delivered(good),
        "foreign-plain.eml": "From: a@b\nTo: c@d\nSubject: hi\n\nhello\n",
        "foreign-other-filter.eml": ferry_mail(unit, filt="X-Ferry-Test: other"),
        "folded-filter.eml": good.replace(FILTER, "X-Ferry-Test:\r\n fuzz"),
        "broken-no-boundary.eml": good.replace("boundary=", "boundery="),
        "broken-truncated.eml": good[:len(good) // 2],
        "broken-no-close.eml": good.replace(f"--{TOKEN}--", ""),
        "broken-two-parts.eml": good.replace(
            "Content-Type: message/delivery-status",
            "Content-Type: application/octet-stream\r\n"
            "Content-Transfer-Encoding: base64"),
        "broken-header.eml": good.replace("MIME-Version: 1.0",
                                          "MIME-Version 1.0"),
        "bad-base64.eml": ferry_mail(unit, body="AQ*A\r\n"),
        "bad-base64-padding.eml": ferry_mail(unit, body="Zh==\r\n"),
        "bad-envelope-version.eml": ferry_mail(unit, version=2),
        "bad-envelope-length.eml": ferry_mail(unit, length=5),
        "bad-envelope-flags.eml": ferry_mail(unit, flags=6),
        "quoted-params.eml": good.replace(
            "multipart/report; report-type=delivery-status;",
            "Multipart/Mixed; (comment) charset=\"a\\\"b\";"),
    }
    # u8 mail bound, u8 piece size, then the stream
    prefixes = {"": b"\xff\x00", "-small-bound": b"\x10\x07"}
    for name, text in seeds.items():
        for suffix, head in prefixes.items():
            if suffix and not name.startswith(("stream", "delivered")):
                continue
            base, ext = os.path.splitext(name)
            yield base + suffix + ext, head + text.encode()


def base64_seeds():
    yield "empty", b""
    yield "foobar", b"Zm9vYmFy"
    yield "padded", b"Zm9vYg==\r\n"
    yield "lines", b64_lines(bytes(range(256))).encode()
    yield "lf-lines", b64_lines(bytes(range(100))).replace("\r\n", "\n").encode()
    yield "bad-space", b"Zm9v YmFy"
    yield "bad-bits", b"Zh=="
    yield "bad-after-pad", b"Zg==Zg=="
    yield "binary", bytes(range(256))


def addr_seeds():
    def helo(mail, filt):
        return bytes([len(mail)]) + mail.encode() + filt.encode()
    yield "peer", helo("peer1@localhost", FILTER)
    yield "long", helo("first.last+tag@mail.example.co.uk", "X-Mailer: GNUnet")
    yield "bad-inject", helo("a@b>\r\nRCPT TO:<v@x", FILTER)
    yield "bad-filter", helo("a@b", "Bcc: victim@example.org")
    yield "list", b"list@example.org, @example.net @bad.example"


def write(directory, seeds):
    os.makedirs(directory, exist_ok=True)
    for name, data in seeds:
        with open(os.path.join(directory, name), "wb") as f:
            f.write(data)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "corpus")
    write(os.path.join(root, "smtp_mail"), mail_seeds())
    write(os.path.join(root, "base64"), base64_seeds())
    write(os.path.join(root, "smtp_addr"), addr_seeds())


if __name__ == "__main__":
    main()
