#!/usr/bin/env python3
"""udpfix.py OUT_A OUT_B [N]: FIX over UDP, as two hosts captured it.

A sends N market data datagrams (FIX 4.4, 35=X) to B; B's capture lacks
every tenth (i % 10 == 5), so pairing them in order would go wrong from
the first gap. A's stamp is 10 us + i ns before B's, so the one-way
latencies are known. Classic nanosecond pcap, Ethernet: for tests of the
correlator's datagram matching (their key is the hash of their bytes)."""
import struct
import sys


def fix(body):
    b = "35=X\x0149=VENUE\x0156=ALGO\x01" + body
    m = "8=FIX.4.4\x019=%d\x01%s" % (len(b), b)
    return m + "10=%03d\x01" % (sum(m.encode()) % 256)


def csum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xFFFF)
    return ~(s + (s >> 16)) & 0xFFFF


def frame(payload):
    udp = struct.pack("!HHHH", 9100, 9101, 8 + len(payload), 0) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0,
                     bytes([198, 18, 0, 1]), bytes([198, 18, 0, 2]))
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    eth = b"\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01\x08\x00"
    return eth + ip + udp


def main():
    out_a, out_b = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
    hdr = struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, 1)
    with open(out_a, "wb") as a, open(out_b, "wb") as b:
        a.write(hdr)
        b.write(hdr)
        t0 = 1763900000 * 10**9
        for i in range(n):
            body = "34=%d\x01268=2\x01279=0\x01269=0\x0155=SYM%d\x01270=%d\x01" \
                   "279=0\x01269=1\x0155=SYM%d\x01270=%d\x01" % (
                       i + 1, i % 7, 100 + i, i % 7, 101 + i)
            f = frame(fix(body).encode())
            for out, ts in ((a, t0 + i * 100000), (b, t0 + i * 100000 + 10000 + i)):
                if out is b and i % 10 == 5:
                    continue
                out.write(struct.pack("<IIII", ts // 10**9, ts % 10**9, len(f), len(f)))
                out.write(f)


main()
