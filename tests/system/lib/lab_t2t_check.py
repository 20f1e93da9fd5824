#!/usr/bin/env python3
"""lab_t2t_check.py SWITCH_ALGO.pcapng ALGO.pcapng SAMPLES ALGO_ADDR

tapless lab's tick_to_trade at the algo against what the switch emulator
saw on the algo's link (issue 30): the algo sends a BUY for every bid
whose price ends in .000 (tapless-algo(1)), so at the switch the order's
arrival minus the departure of the latest .000 bid of its symbol before it
bounds the algo's own tick-to-trade from above (the two hops between them
only add), whatever the capture at the algo dropped. Each tick_to_trade
sample of the main run (SAMPLES, tapless correlate --samples) is joined to
its BUY in the algo's capture by stamp (ALGO.pcapng, tshark), to the same
ClOrdID at the switch, and must lie in (0, bound + 2 us]. A sample paired
with a bid from before a capture hole is far above its bound.
Prints one line; exit 1 when a sample is out of its bound or none joined.
"""
import subprocess
import sys

SLACK_NS = 2000


def fix_msgs(pcap):
    """(stamp_ns, src, {tag: [values]}) for every FIX message, tshark read."""
    out = subprocess.run(
        ['tshark', '-r', pcap, '-Y', 'tcp.len > 0', '-T', 'fields',
         '-e', 'frame.time_epoch', '-e', 'ip.src', '-e', 'tcp.payload'],
        capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        f = line.split('\t')
        if len(f) < 3 or not f[2]:
            continue
        sec, _, frac = f[0].partition('.')
        ts = int(sec) * 10**9 + int((frac + '000000000')[:9])
        data = bytes.fromhex(f[2].replace(':', '')).decode('latin-1')
        for part in data.split('8=FIX')[1:]:
            tags = {}
            for field in part.split('\x01'):
                k, _, v = field.partition('=')
                if k.isdigit():
                    tags.setdefault(int(k), []).append(v)
            yield ts, f[1], tags


def main():
    sw, algo_pcap, samples, algo = sys.argv[1:5]
    # At the switch, on the algo's link: .000 bids going to the algo, BUYs
    # coming from it.
    bids = {}      # symbol -> [stamps]
    orders = {}    # ClOrdID -> (stamp, symbol)
    for ts, src, t in fix_msgs(sw):
        typ = t.get(35, [''])[0]
        if typ == 'X' and src != algo:
            # Entries: 269 then 270 then 55 in each (tapless-venue's order).
            for kind, px, sym in zip(t.get(269, []), t.get(270, []), t.get(55, [])):
                if kind == '0' and px.endswith('.000'):
                    bids.setdefault(sym, []).append(ts)
        elif typ == 'D' and src == algo and t.get(54, [''])[0] == '1':
            orders.setdefault(t[11][0], (ts, t[55][0]))
    # At the algo: its BUYs by stamp (the sender's, as correlate uses).
    by_ts = {}
    for ts, src, t in fix_msgs(algo_pcap):
        if t.get(35, [''])[0] == 'D' and t.get(54, [''])[0] == '1' and src == algo:
            by_ts.setdefault(ts, t[11][0])
    n = bad = unjoined = 0
    worst = None
    for line in open(samples):
        f = line.split()
        if line.startswith('#') or f[0] != 'main' or f[1] != 'tick_to_trade':
            continue
        ts, v = int(f[4]), int(f[5])
        cl = by_ts.get(ts)
        if cl is None or cl not in orders:
            unjoined += 1
            continue
        s_in, sym = orders[cl]
        before = [b for b in bids.get(sym, []) if b < s_in]
        if not before:
            unjoined += 1
            continue
        bound = s_in - max(before)
        n += 1
        if not 0 < v <= bound + SLACK_NS:
            bad += 1
            if bad <= 3:
                print('FAIL: tick_to_trade %d ns for ClOrdID %s (%s): the switch '
                      'bounds it at %d ns' % (v, cl, sym, bound))
        if worst is None or v - bound > worst:
            worst = v - bound
    print('lab tick_to_trade: %d samples joined to their BUY at the switch, %d out of '
          'their bound, %d not joined; largest sample - bound %s ns' %
          (n, bad, unjoined, worst))
    sys.exit(1 if bad or not n else 0)


main()
