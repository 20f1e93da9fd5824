#!/usr/bin/env python3
"""keyed_send.py PROTO DST_IP PORT COUNT SOCK — send COUNT messages to DST_IP:PORT
and, after each, hand tapless-capd a keyed TX record (txsock version 2,
tapless-capd(8)) naming the frame: for UDP its length and FNV-1a hash, for
TCP the sequence number of its last byte, read (as root) through TCP_REPAIR.
The stamp is the host clock after the send: a stand-in for the driver's.
A last record names a frame that was never sent (capd must count it as
found none). Prints "sent N keyed M"."""
import socket, struct, sys, time

proto, dst, port, count, path = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
TCP_REPAIR, TCP_REPAIR_QUEUE, TCP_QUEUE_SEQ, TCP_SEND_QUEUE = 19, 20, 21, 2


def fnv1a(data):
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
    return h


def record(sock, seq, length, h, ts):
    src, sport = sock.getsockname()
    hdr = struct.pack('<IHHIIqIHHiI', 0x58544c54, 2, 40, 96, 0, ts, 0, 8, 0, -1, 0)
    key = struct.pack('<BBHHH16s16sIIQ', 4, 6 if proto == 'tcp' else 17, sport, port, 0,
                      socket.inet_aton(src), socket.inet_aton(dst), seq, length, h)
    return hdr + key


ux = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
ux.connect(path)
if proto == 'udp':
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.connect((dst, port))
else:
    s = socket.create_connection((dst, port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.setsockopt(socket.IPPROTO_TCP, TCP_REPAIR, 1)
    s.setsockopt(socket.IPPROTO_TCP, TCP_REPAIR_QUEUE, TCP_SEND_QUEUE)
    seq = s.getsockopt(socket.IPPROTO_TCP, TCP_QUEUE_SEQ)
    s.setsockopt(socket.IPPROTO_TCP, TCP_REPAIR, 0)
n = 0
for i in range(count):
    msg = b'8=FIX.4.4\x0135=X\x0134=%d\x01' % i + b'x' * (i % 50)
    s.send(msg)
    ts = time.time_ns()
    if proto == 'udp':
        ux.sendall(record(s, 0, len(msg), fnv1a(msg), ts))
    else:
        seq = (seq + len(msg)) & 0xffffffff
        ux.sendall(record(s, (seq - 1) & 0xffffffff, 0, 0, ts))
    n += 1
    time.sleep(0.002)	# one message, one frame
ux.sendall(record(s, 12345, 7, 7, time.time_ns()))
print('sent %d keyed %d' % (count, n + 1))
ux.close()
s.close()
