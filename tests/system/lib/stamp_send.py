#!/usr/bin/env python3
"""stamp_send.py — an ordinary, unmodified TCP sender for test_stamp_cgroup.

    stamp_send.py tcp|sendfile HOST PORT COUNT RATE

Connects to HOST:PORT and sends COUNT FIX NewOrderSingle messages at RATE
messages/s, one message a send: with send(2) (tcp) or with sendfile(2)
from a file of the messages (sendfile). Nothing here knows about stamps.
"""
import os
import socket
import sys
import tempfile
import time


def fix(seq):
    body = ("35=D\x0149=ALGO\x0156=VENUE\x0134=%d\x0152=20261125-00:00:00\x01"
            "11=ORD%d\x0155=XYZ\x0154=1\x0138=100\x0140=2\x0144=10.5\x01"
            % (seq, seq))
    msg = "8=FIX.4.4\x019=%d\x01%s" % (len(body), body)
    return (msg + "10=%03d\x01" % (sum(msg.encode()) % 256)).encode()


def main():
    if len(sys.argv) != 6 or sys.argv[1] not in ("tcp", "sendfile"):
        sys.exit("usage: stamp_send.py tcp|sendfile HOST PORT COUNT RATE")
    mode, host = sys.argv[1], sys.argv[2]
    port, count, rate = int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
    msgs = [fix(i) for i in range(1, count + 1)]
    f = None
    if mode == "sendfile":
        f = tempfile.TemporaryFile()
        f.write(b"".join(msgs))
        f.flush()
    s = socket.create_connection((host, port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    t0, off = time.monotonic(), 0
    for i, m in enumerate(msgs, 1):
        if f:
            done = 0
            while done < len(m):
                done += os.sendfile(s.fileno(), f.fileno(), off + done,
                                    len(m) - done)
            off += len(m)
        else:
            s.sendall(m)
        wait = t0 + i / rate - time.monotonic()
        if wait > 0:
            time.sleep(wait)
    time.sleep(0.1)
    s.close()


if __name__ == "__main__":
    main()
