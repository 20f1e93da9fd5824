#!/usr/bin/env python3
"""follow_feed.py — write a pcapng capture into a directory the way
tapless-capd does, slowly, for `tapless correlate --follow` to read while it
is written.

    follow_feed.py [options] INPUT.pcapng DIR PREFIX

INPUT is split at block boundaries into --files files, each beginning with
INPUT's header blocks (the section header and interface blocks before the
first packet), named PREFIX-STAMP-NNNN.pcapng as capd names them. Each is
created as NAME.part, written in pieces of random size (cut anywhere: inside
a block's header, its body or its trailer) with a pause after each, and
renamed to NAME when whole; the next is created only then. Seeded: the same
options cut at the same bytes.

--corrupt K (repeatable) makes the packet block in the middle of file K
(from 0) say at its end a length 4 more than at its start, and prints on
standard output "corrupt NAME OFFSET", OFFSET being where the reader finds
the disagreement (the trailing length field).
"""
import argparse
import os
import random
import struct
import sys
import time

EPB = 6


def blocks(data):
    """(type, offset, length) of each block; little-endian sections only."""
    out = []
    off = 0
    while off + 12 <= len(data):
        btype, blen = struct.unpack_from("<II", data, off)
        if blen < 12 or off + blen > len(data):
            sys.exit("follow_feed: %d: bad block length %d" % (off, blen))
        out.append((btype, off, blen))
        off += blen
    if off != len(data):
        sys.exit("follow_feed: %d bytes after the last block" % (len(data) - off))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("input")
    ap.add_argument("dir")
    ap.add_argument("prefix")
    ap.add_argument("--files", type=int, default=3)
    ap.add_argument("--piece", type=int, default=16384,
                    help="largest piece in bytes")
    ap.add_argument("--pause", type=float, default=0.05,
                    help="seconds after each piece (at most; drawn)")
    ap.add_argument("--stamp", default="20251123T000000Z")
    ap.add_argument("--seed", type=int, default=22)
    ap.add_argument("--corrupt", type=int, action="append", default=[])
    a = ap.parse_args()

    data = open(a.input, "rb").read()
    if struct.unpack_from("<I", data, 8)[0] != 0x1A2B3C4D:
        sys.exit("follow_feed: %s: not a little-endian pcapng file" % a.input)
    bl = blocks(data)
    first = next(i for i, b in enumerate(bl) if b[0] == EPB)
    head = data[:bl[first][1]]
    body = bl[first:]
    rng = random.Random(a.seed)
    per = (len(body) + a.files - 1) // a.files
    for k in range(a.files):
        part = body[k * per:(k + 1) * per]
        if not part:
            break
        buf = bytearray(head + data[part[0][1]:part[-1][1] + part[-1][2]])
        name = "%s-%s-%04d.pcapng" % (a.prefix, a.stamp, k)
        if k in a.corrupt:
            epbs = [b for b in part if b[0] == EPB]
            btype, off, blen = epbs[len(epbs) // 2]
            at = len(head) + off - part[0][1] + blen - 4
            struct.pack_into("<I", buf, at, blen + 4)
            print("corrupt %s %d" % (name, at), flush=True)
        path = os.path.join(a.dir, name)
        fd = os.open(path + ".part", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        pos = 0
        while pos < len(buf):
            n = rng.randint(1, a.piece)
            os.write(fd, buf[pos:pos + n])
            pos += n
            time.sleep(rng.uniform(0, a.pause))
        os.close(fd)
        os.rename(path + ".part", path)
        print("done %s %d" % (name, len(buf)), flush=True)


if __name__ == "__main__":
    main()
