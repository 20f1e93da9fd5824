#!/usr/bin/env python3
"""txn_truth_check.py TRUTH.json CORRELATE.json SAMPLES [EXPORT.tsv]

A correlator run against tapless sim's truth of the same files, order by
order (issue 30: transactions right when the capture dropped frames):
- every transaction sample correlate wrote (--samples) is a truth sample of
  its kind at the same order stamp (ts_utc), with the same latency, and one
  whose trigger the capture has (trigger_captured);
- per kind, correlate's count plus its trigger_lost is the truth's number
  of orders (its samples, lost trigger or not), and its count is at most
  the truth's count of orders whose trigger it has;
- order_to_ack and order_to_fill (paired by ClOrdID): exactly the truth's;
- with EXPORT.tsv (tapless export --txn-output, TabSeparatedWithNames):
  the exported transactions are correlate's samples, one for one.
Stamps are compared as integers (they exceed a double). Prints a line per
kind; exits 1 on any difference.
"""
import json
import sys
from collections import Counter

truth = json.load(open(sys.argv[1]))
corr = json.load(open(sys.argv[2]))
bad = 0


def fail(msg):
    global bad
    print("FAIL:", msg)
    bad += 1


samples = Counter()
by_kind = {}
for line in open(sys.argv[3]):
    if line.startswith('#'):
        continue
    f = line.split()
    run, kind, ts, lat = f[0], f[1], int(f[4]), int(f[5])
    if run != 'main' or kind in ('hop', 'switch', 'app_to_wire'):
        continue
    samples[(kind, ts, lat)] += 1
    by_kind.setdefault(kind, []).append((ts, lat))

for t in truth['transactions']:
    kind = t['name']
    want = {}
    for s in t.get('samples', []):
        want.setdefault(int(s['ts_utc']), []).append((int(s['latency_ns']), s['trigger_captured']))
    got = by_kind.get(kind, [])
    c = next((x for x in corr['transactions'] if x['name'] == kind and 'rate' not in x), None)
    n = c['latency_ns']['count'] if c else 0
    lost = (c or {}).get('trigger_lost') or 0
    total = sum(len(v) for v in want.values())
    captured = sum(1 for v in want.values() for _, ok in v if ok)
    wrong = 0
    for ts, lat in got:
        if not any(l == lat and ok for l, ok in want.get(ts, [])):
            wrong += 1
            if wrong <= 3:
                fail("%s: correlate's sample at %d (%d ns) is no truth sample with its trigger: truth there %s" % (kind, ts, lat, want.get(ts)))
    if len(got) != n:
        fail("%s: %d samples in the samples file, %d counted" % (kind, len(got), n))
    if kind in ('tick_to_trade', 'fill_to_sell'):
        if n + lost != total:
            fail("%s: %d measured + %d trigger_lost = %d, the truth has %d orders" % (kind, n, lost, n + lost, total))
        if n > captured:
            fail("%s: %d measured, the truth's orders with their trigger %d" % (kind, n, captured))
    elif n != total:
        fail("%s: %d measured, the truth %d" % (kind, n, total))
    mean = sum(l for _, l in got) / len(got) if got else 0
    print("%-14s truth %4d orders (%d trigger captured); correlate %4d measured, "
          "%d trigger_lost, %d not truth; mean %.1f ns" % (kind, total, captured, n, lost, wrong, mean))

if len(sys.argv) > 4:
    exp = Counter()
    for i, line in enumerate(open(sys.argv[4])):
        f = line.rstrip('\n').split('\t')
        if i == 0:
            col = {k: j for j, k in enumerate(f)}
            continue
        exp[(f[col['kind']], int(f[col['ts']]), int(f[col['latency_ns']]))] += 1
    if exp != samples:
        fail("export: %d transactions, correlate's samples %d; %d differ" %
             (sum(exp.values()), sum(samples.values()), sum(((exp - samples) + (samples - exp)).values())))
    else:
        print("export: the same %d transactions" % sum(exp.values()))
sys.exit(1 if bad else 0)
