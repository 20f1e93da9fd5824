#!/usr/bin/env python3
"""venue_client.py — a FIX 4.4 client of ONE tapless-venue session, so that
tests/system/test_venue_sessions.sh can put the market data session and the
order session in two separate programs, as users with one engine per
session do (issue 29).

    venue_client.py --connect ADDR:PORT --role md|orders
                    [--orders N --order-rate R --order-delay S]
                    [--logout-after S] [--cross-logout] [--timeout S]

It logs on (ALGO -> VENUE, HeartBtInt 30) and, counting from the venue's
Logon:
  --role orders   sends N NewOrderSingles (35=D, BUY 100 TLA) at R a
                  second, starting S seconds in, while the session is up;
  --logout-after  sends its Logout S seconds in (else it waits for the
                  venue's);
  --cross-logout  when the venue logs out first, sends a TestRequest (and,
                  for orders, one more NewOrderSingle, ClOrdID LATE) before
                  its own Logout, as a client whose messages crossed the
                  venue's Logout on the wire would; then answers after 0.3 s.
It reads until the venue closes the connection (or --timeout) and prints
one JSON object: messages received by MsgType, sequence gaps, the orders
sent and the ExecutionReports each got, how the venue's Logout came
(initiated by the venue, or its reply to ours), and every message received
after that Logout, which must be none.
"""
import argparse
import json
import select
import socket
import sys
import time

SOH = b'\x01'


def utc():
    t = time.time()
    return time.strftime('%Y%m%d-%H:%M:%S', time.gmtime(t)) + '.%03d' % (int(t * 1000) % 1000)


class Session:
    def __init__(self, sock):
        self.sock = sock
        self.seq = 1

    def send(self, msg_type, fields=()):
        body = '35=%s\x0149=ALGO\x0156=VENUE\x0134=%d\x0152=%s\x01' % (
            msg_type, self.seq, utc())
        body += ''.join('%d=%s\x01' % f for f in fields)
        head = '8=FIX.4.4\x019=%d\x01%s' % (len(body), body)
        data = (head + '10=%03d\x01' % (sum(head.encode()) % 256)).encode()
        self.sock.sendall(data)
        self.seq += 1


def frames(buf):
    """Whole messages at the start of buf: (list of field lists, rest)."""
    out = []
    while True:
        if not buf.startswith(b'8=FIX.4.4\x019='):
            if buf and not b'8=FIX.4.4\x019='.startswith(buf[:12]):
                raise ValueError('stream does not start with 8=FIX.4.4')
            return out, buf
        lend = buf.find(SOH, 12)
        if lend < 0:
            return out, buf
        body = int(buf[12:lend])
        end = lend + 1 + body + 7
        if len(buf) < end:
            return out, buf
        msg = buf[:end]
        if msg[-7:-4] != b'10=' or int(msg[-4:-1]) != sum(msg[:-7]) % 256:
            raise ValueError('bad CheckSum')
        out.append([tuple(f.decode().split('=', 1)) for f in msg.split(SOH)[:-1]])
        buf = buf[end:]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--connect', required=True)
    ap.add_argument('--role', choices=('md', 'orders'), required=True)
    ap.add_argument('--orders', type=int, default=0)
    ap.add_argument('--order-rate', type=float, default=100)
    ap.add_argument('--order-delay', type=float, default=0.2)
    ap.add_argument('--logout-after', type=float)
    ap.add_argument('--cross-logout', action='store_true')
    ap.add_argument('--timeout', type=float, default=20)
    a = ap.parse_args()
    host, port = a.connect.rsplit(':', 1)
    end = time.monotonic() + a.timeout
    while True:
        try:
            sock = socket.create_connection((host, int(port)), timeout=1)
            break
        except OSError:
            if time.monotonic() > end:
                raise
            time.sleep(0.05)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s = Session(sock)
    s.send('A', [(98, '0'), (108, '30')])

    r = {'role': a.role, 'types': {}, 'seq_gaps': 0, 'orders_sent': 0,
         'late_sent': 0, 'reports': {}, 'venue_logout': None,
         'venue_logout_text': None, 'after_venue_logout': [], 'eof': False,
         'error': None}
    t_logon = None          # the venue's Logon
    logged_out = False      # our Logout sent
    answer_at = None        # when to answer the venue's Logout
    in_seq = 1
    buf = b''
    try:
        while time.monotonic() < end:
            now = time.monotonic()
            up = t_logon is not None and r['venue_logout'] is None and not logged_out
            # Timed actions, while the session is up.
            if up and a.role == 'orders' and r['orders_sent'] < a.orders:
                due = t_logon + a.order_delay + r['orders_sent'] / a.order_rate
                if now >= due:
                    r['orders_sent'] += 1
                    s.send('D', [(11, 'O%d' % r['orders_sent']), (55, 'TLA'),
                                 (54, '1'), (60, utc()), (38, '100'), (40, '1')])
                    continue
            if up and a.logout_after is not None and now >= t_logon + a.logout_after:
                s.send('5', [(58, 'client leaving')])
                logged_out = True
            if answer_at is not None and now >= answer_at:
                s.send('5')
                logged_out = True
                answer_at = None
            wait = 0.05
            ready, _, _ = select.select([sock], [], [], wait)
            if not ready:
                continue
            data = sock.recv(65536)
            if not data:
                r['eof'] = True
                break
            msgs, buf = frames(buf + data)
            for m in msgs:
                f = dict(m)
                t = f.get('35', '?')
                r['types'][t] = r['types'].get(t, 0) + 1
                seq = int(f.get('34', '0'))
                if seq != in_seq:
                    r['seq_gaps'] += 1
                in_seq = seq + 1
                if r['venue_logout'] is not None:
                    # Nothing may follow the venue's Logout.
                    r['after_venue_logout'].append(t)
                    continue
                if t == 'A':
                    t_logon = time.monotonic()
                elif t == '5':
                    r['venue_logout'] = 'reply' if logged_out else 'initiated'
                    r['venue_logout_text'] = f.get('58')
                    if logged_out:
                        continue
                    if a.cross_logout:
                        s.send('1', [(112, 'LATE')])
                        if a.role == 'orders':
                            r['late_sent'] += 1
                            s.send('D', [(11, 'LATE'), (55, 'TLA'), (54, '1'),
                                         (60, utc()), (38, '100'), (40, '1')])
                        answer_at = time.monotonic() + 0.3
                    else:
                        s.send('5')
                        logged_out = True
                elif t == '1' and not logged_out:
                    s.send('0', [(112, f.get('112', ''))])
                elif t == '8':
                    r['reports'].setdefault(f.get('11', '?'), []).append(f.get('39'))
    except (OSError, ValueError) as e:
        r['error'] = str(e)
    # Orders sent before the venue's Logout that got New then Filled.
    r['orders_filled'] = sum(1 for k, v in r['reports'].items()
                             if k != 'LATE' and v == ['0', '2'])
    r['reports_total'] = sum(len(v) for v in r['reports'].values())
    r['md'] = r['types'].get('X', 0)
    del r['reports']
    json.dump(r, sys.stdout)
    print()


if __name__ == '__main__':
    main()
