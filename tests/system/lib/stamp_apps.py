#!/usr/bin/env python3
"""stamp_apps.py MODE ARGS... — small programs, run under tapless-stamp by
tests/system/test_stamp*.sh, each doing one thing a real program does to
its sockets, and checking what it sees itself. Exit 0 and a last line
"MODE ok ..." when all went as without the shim.

  sink PORT [PORT...]           accept TCP on each port, read to EOF, print
                                "sink PORT BYTES" per connection (forever)
  send HOST PORT COUNT SIZE     TCP_NODELAY client: COUNT messages of SIZE
  fork HOST PORT COUNT          send; fork: the child sends on the same
                                socket; then exec a new program (this one,
                                'exec-child') that sends on it again
  exec-child FD COUNT           send COUNT messages on inherited FD
  reuse HOST PORT1 PORT2 COUNT  send on a socket, close it, open another
                                (same descriptor number) to PORT2, send
  own HOST PORT COUNT           stamp TCP itself (SO_TIMESTAMPING, OPT_ID)
                                and read its own stamps: keys must be its own
  own-udp HOST PORT COUNT       the same for UDP: ids 0..COUNT-1
  rst-server PORT               accept, read a little, reset (SO_LINGER 0)
  rst HOST PORT                 send until the peer resets: poll and epoll
                                must say POLLERR, recv ECONNRESET
  refused HOST PORT             connected UDP to a closed port: POLLERR,
                                then ECONNREFUSED
  udp-threads HOST PORT THREADS COUNT  one UDP socket, THREADS senders
  long HOST PORT SECONDS        send 1 kB every millisecond for SECONDS
  idle HOST PORT COUNT SECONDS  send COUNT messages, print "idle sent T"
                                (CLOCK_MONOTONIC after the last), then make
                                no call for SECONDS before closing
  txsink PATH                   stand in for capd's --tx-socket: print
                                "rec T SEQ" per record as it comes (T:
                                CLOCK_MONOTONIC, SEQ: a keyed record's
                                sequence number) (forever)
"""
import os, select, socket, struct, sys, threading, time

SOF_TX_SOFTWARE, SOF_SOFTWARE, SOF_OPT_ID, SOF_OPT_TSONLY = 1 << 1, 1 << 4, 1 << 7, 1 << 11
SO_TIMESTAMPING = 37
MSG_ERRQUEUE = 0x2000


def die(msg):
    sys.stderr.write('%s: %s\n' % (sys.argv[1], msg))
    sys.exit(1)


def connect(host, port):
    s = socket.create_connection((host, port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def send_n(s, count, size, tag=b'm'):
    for i in range(count):
        s.sendall((tag * size)[:size])
        time.sleep(0.0005)


def sink(ports):
    lsocks = []
    for p in ports:
        l = socket.socket()
        l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        l.bind(('0.0.0.0', p))
        l.listen(16)
        lsocks.append(l)
    print('listening', flush=True)

    def serve(c, port):
        n = 0
        while True:
            b = c.recv(65536)
            if not b:
                break
            n += len(b)
        print('sink %d %d' % (port, n), flush=True)
        c.close()

    while True:
        r, _, _ = select.select(lsocks, [], [])
        for l in r:
            c, _ = l.accept()
            threading.Thread(target=serve, args=(c, l.getsockname()[1]), daemon=True).start()


def fork_mode(host, port, count):
    s = connect(host, port)
    send_n(s, count, 100, b'p')
    pid = os.fork()
    if pid == 0:
        send_n(s, count, 100, b'c')
        sys.exit(0)
    _, st = os.waitpid(pid, 0)
    if st:
        die('child exited %d' % st)
    os.set_inheritable(s.fileno(), True)
    os.execv(sys.executable, [sys.executable, sys.argv[0], 'exec-child', str(s.fileno()), str(count)])


def exec_child(fd, count):
    s = socket.socket(fileno=fd)
    send_n(s, count, 100, b'e')
    s.close()
    print('fork ok %d' % (3 * count), flush=True)


def reuse(host, p1, p2, count):
    s1 = connect(host, p1)
    fd1 = s1.fileno()
    send_n(s1, count, 200, b'1')
    s1.close()
    s2 = connect(host, p2)
    if s2.fileno() != fd1:
        die('new socket got fd %d, not %d' % (s2.fileno(), fd1))
    send_n(s2, count, 300, b'2')
    s2.close()
    print('reuse ok fd %d' % fd1, flush=True)


def own_stamps(s, count, expect, proto):
    """Read the error queue until count stamps came; check their keys."""
    keys, deadline = [], time.time() + 10
    while len(keys) < count and time.time() < deadline:
        # select() has no bit for the error queue alone (POLLERR is
        # readable and writable): wait a little, then read all there is,
        # so the wait does not pace the reading (50 stamps at one per
        # 0.2 s wait took the whole 10 s).
        select.select([], [], [s], 0.02)
        while True:
            try:
                data, anc, flags, _ = s.recvmsg(256, 1024, MSG_ERRQUEUE | socket.MSG_DONTWAIT)
            except BlockingIOError:
                break
            for level, typ, d in anc:
                if (level, typ) in ((socket.SOL_IP, 11), (41, 25)):  # IP(V6)_RECVERR
                    _, origin, _, _, _, _, key = struct.unpack('=IBBBBII', d[:16])
                    if origin == 4:
                        keys.append(key)
    if keys != expect:
        die('own %s stamps: keys %s..., want %s... (%d of %d; first difference at %s)' % (proto, keys[:5], expect[:5], len(keys), len(expect), next((i for i, (a, b) in enumerate(zip(keys, expect)) if a != b), min(len(keys), len(expect)))))


def own(host, port, count):
    s = connect(host, port)
    s.sendall(b'x' * 50)          # before stamping: not the program's keys
    time.sleep(0.2)               # acked, so OPT_ID counts from here
    s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPING,
                 SOF_TX_SOFTWARE | SOF_SOFTWARE | SOF_OPT_ID | SOF_OPT_TSONLY)
    for i in range(count):
        s.send(b'o' * 100)
        time.sleep(0.002)
    own_stamps(s, count, [100 * i + 99 for i in range(count)], 'tcp')
    s.close()
    print('own ok %d' % count, flush=True)


def own_udp(host, port, count):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.connect((host, port))
    s.send(b'before')
    s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPING,
                 SOF_TX_SOFTWARE | SOF_SOFTWARE | SOF_OPT_ID | SOF_OPT_TSONLY)
    for i in range(count):
        s.send(b'u%d' % i)
    own_stamps(s, count, list(range(count)), 'udp')
    print('own-udp ok %d' % count, flush=True)


def rst_server(port):
    l = socket.socket()
    l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    l.bind(('0.0.0.0', port))
    l.listen(4)
    print('listening', flush=True)
    for _ in range(2):
        c, _ = l.accept()
        c.recv(1000)
        time.sleep(0.3)           # the peer keeps sending meanwhile
        c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, 0))
        c.close()


def rst(host, port):
    for how in ('poll', 'epoll'):
        s = connect(host, port)
        s.setblocking(False)
        p = select.poll() if how == 'poll' else select.epoll()
        p.register(s.fileno(), select.POLLIN if how == 'poll' else select.EPOLLIN)
        err, deadline = 0, time.time() + 10
        while time.time() < deadline and not err:
            try:
                s.send(b'r' * 100)
            except (BlockingIOError, ConnectionResetError, BrokenPipeError):
                pass
            for fd, ev in p.poll(0.01):
                if ev & (select.POLLERR | select.POLLHUP):
                    err = ev
                elif ev & select.POLLIN:
                    die('%s: readable without error: %#x' % (how, ev))
        if not err & select.POLLERR:
            die('%s: no POLLERR after the reset (events %#x)' % (how, err))
        try:
            s.recv(100)
            die('%s: recv after the reset did not fail' % how)
        except ConnectionResetError:
            pass
        s.close()
    print('rst ok', flush=True)


def refused(host, port):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.connect((host, port))
    s.send(b'anyone?')
    p = select.poll()
    p.register(s.fileno(), select.POLLIN)
    ev = p.poll(5000)
    if not ev or not ev[0][1] & select.POLLERR:
        die('no POLLERR after the ICMP (%s)' % ev)
    try:
        s.recv(100)
        die('recv did not fail')
    except ConnectionRefusedError:
        pass
    print('refused ok', flush=True)


def udp_threads(host, port, nthreads, count):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)

    def run(t):
        for i in range(count):
            s.sendto(b'%02d:%06d:' % (t, i) + b'z' * (i % 50), (host, port))
            if i % 4 == 3:
                time.sleep(0.0005)   # a publisher's pace, not a flood

    ts = [threading.Thread(target=run, args=(t,)) for t in range(nthreads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    print('udp-threads ok %d' % (nthreads * count), flush=True)


def long_run(host, port, seconds):
    s = connect(host, port)
    end, n = time.time() + seconds, 0
    while time.time() < end:
        s.sendall(b'L' * 1000)
        n += 1
        time.sleep(0.001)
    s.close()
    print('long ok %d' % n, flush=True)


def idle(host, port, count, seconds):
    s = connect(host, port)
    send_n(s, count, 100)
    print('idle sent %.6f' % time.monotonic(), flush=True)
    time.sleep(seconds)
    s.close()
    print('idle ok %d' % count, flush=True)


def txsink(path):
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(8)
    print('listening', flush=True)
    while True:
        c, _ = srv.accept()
        buf = b''
        while True:
            d = c.recv(65536)
            if not d:
                break
            t = time.monotonic()
            buf += d
            while len(buf) >= 12:
                hdr, rec_len = struct.unpack_from('<H', buf, 6)[0], struct.unpack_from('<I', buf, 8)[0]
                if len(buf) < rec_len:
                    break
                seq = struct.unpack_from('<I', buf, hdr + 40)[0] if rec_len >= hdr + 44 else 0
                print('rec %.6f %u' % (t, seq), flush=True)
                buf = buf[rec_len:]
        c.close()


def main():
    m, a = sys.argv[1], sys.argv[2:]
    if m == 'sink':
        sink([int(p) for p in a])
    elif m == 'send':
        s = connect(a[0], int(a[1]))
        send_n(s, int(a[2]), int(a[3]))
        s.close()
        print('send ok %s' % a[2], flush=True)
    elif m == 'fork':
        fork_mode(a[0], int(a[1]), int(a[2]))
    elif m == 'exec-child':
        exec_child(int(a[0]), int(a[1]))
    elif m == 'reuse':
        reuse(a[0], int(a[1]), int(a[2]), int(a[3]))
    elif m == 'own':
        own(a[0], int(a[1]), int(a[2]))
    elif m == 'own-udp':
        own_udp(a[0], int(a[1]), int(a[2]))
    elif m == 'rst-server':
        rst_server(int(a[0]))
    elif m == 'rst':
        rst(a[0], int(a[1]))
    elif m == 'refused':
        refused(a[0], int(a[1]))
    elif m == 'udp-threads':
        udp_threads(a[0], int(a[1]), int(a[2]), int(a[3]))
    elif m == 'long':
        long_run(a[0], int(a[1]), float(a[2]))
    elif m == 'idle':
        idle(a[0], int(a[1]), int(a[2]), float(a[3]))
    elif m == 'txsink':
        txsink(a[0])
    else:
        die('unknown mode')


main()
