#!/usr/bin/env python3
# pcapng_isb.py FILE...: the heartbeats and statistics blocks of pcapng
# files (read in the order given, as one stream), checked against the
# promise a heartbeat makes (tapless-pcapng(5)): every frame stamped at or
# before it is earlier in the file. Prints counts; exits 1 when a frame
# after a heartbeat is stamped at or before it, or heartbeats go back.
# Little-endian sections, nanosecond stamps (what tapless-capd writes).
import struct
import sys

packets = heartbeats = stats = drops_opts = broken = back = 0
quiet_hb = 0	# heartbeats with no frame since the previous heartbeat
last_hb = None
since_hb = 0
for path in sys.argv[1:]:
    d = open(path, 'rb').read()
    off = 0
    top = None	# highest heartbeat so far in this file
    while off + 12 <= len(d):
        t, n = struct.unpack_from('<II', d, off)
        if n < 12 or off + n > len(d):
            break
        if t in (5, 6):
            hi, lo = struct.unpack_from('<II', d, off + 12)
            ts = hi << 32 | lo
            if t == 6:
                packets += 1
                since_hb += 1
                if top is not None and ts <= top:
                    broken += 1
            else:
                body = d[off + 20:off + n - 4]
                if b'tapless: complete to' in body:
                    heartbeats += 1
                    if last_hb is not None and ts < last_hb:
                        back += 1
                    if since_hb == 0:
                        quiet_hb += 1
                    since_hb = 0
                    last_hb = ts
                    top = ts if top is None else max(top, ts)
                else:
                    stats += 1
                    # options after the 20-byte header: code 5 = isb_ifdrop
                    p = off + 20
                    while p + 4 <= off + n - 4:
                        code, ln = struct.unpack_from('<HH', d, p)
                        if code == 0:
                            break
                        if code == 5:
                            drops_opts += 1
                        p += 4 + (ln + 3) // 4 * 4
        off += n
print("packets %d heartbeats %d (quiet %d) statistics %d (with drops %d) "
      "promise broken %d heartbeats back %d" %
      (packets, heartbeats, quiet_hb, stats, drops_opts, broken, back))
sys.exit(1 if broken or back else 0)
