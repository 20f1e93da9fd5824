#!/usr/bin/env python3
"""syncd_truth_check.py JOURNAL MARKS STATUS_JSONL [--report-only]

Judges a client's sync journal against what test_syncd_truth.sh did to it.
MARKS holds "NAME TIME_NS" lines (CLOCK_REALTIME, like the journal) for
the faults the test caused: drop_start/drop_end (Sync dropped by the
bridge), gm_stop/gm_start (the grandmaster's daemon stopped), kill
(ptp4l killed), reload (SIGHUP), sock_rm (ptp4l's management socket
removed). STATUS_JSONL holds `tapless status --json` answers polled
meanwhile, one per line.

Freshness is judged from the journal's own figures, the same way for any
writer: a sample rests on a new measurement when it has an offset and a
nonzero delay and they differ from the sample before (ptp4l's data sets
repeat the last figures while nothing is measured, and hold 0/0 before the
first). A writer that marks stale samples "-" passes that test trivially.

Checks (each failure printed, exit 1):
  - no sample in sync on a placeholder (delay 0) or without an offset;
  - after start, a ptp4l restart, a reload, a relock and the socket's
    removal, no sample in sync before `settle` fresh samples after it;
  - while Sync is dropped or the grandmaster is gone (after a grace of
    three sample intervals), no sample in sync; the bound never below
    the last fresh bound before, never shrinking, and growing; samples
    in holdover ("h") present, and a bound past the threshold never
    holdover;
  - the rules event at start and after the reload, with the threshold in
    force;
  - mgmt_lost within 4 s of the socket's removal, and the status polled
    then says why;
  - every status answer: a clock in sync has no alarm denying it.
It prints a table: per case, the time claimed in sync wrongly, the bounds
claimed meanwhile (first -> last) and the first fresh |offset| after.
With --report-only it prints the table and exits 0 (the "before" run)."""
import json
import re
import sys

SETTLE = 3


def load(path):
    samples, events = [], []
    with open(path) as f:
        for line in f:
            if line.startswith('#') or not line.strip():
                continue
            w = line.split()
            t = int(w[0])
            if w[1] == 'sample' and len(w) in (12, 13):  # 13: with class (v3)
                num = lambda x: None if x == '-' else int(x)
                samples.append(dict(t=t, clock=w[2], state=w[3],
                                    off=num(w[4]), delay=num(w[5]),
                                    sync=w[10], bound=num(w[11])))
            elif w[1] == 'event':
                events.append(dict(t=t, clock=w[2], name=w[3],
                                   text=' '.join(w[4:])))
    return samples, events


def main():
    report_only = '--report-only' in sys.argv
    args = [a for a in sys.argv[1:] if not a.startswith('--')]
    samples, events = load(args[0])
    marks = {}
    with open(args[1]) as f:
        for line in f:
            n, t = line.split()
            marks[n] = int(t)
    statuses = []
    try:
        with open(args[2]) as f:
            for line in f:
                try:
                    statuses.append(json.loads(line))
                except ValueError:
                    pass
    except OSError:
        pass
    samples = [s for s in samples if s['clock'] == 'sys']
    fails = []

    def fail(msg):
        fails.append(msg)

    rules = [e for e in events if e['name'] == 'rules']
    interval = 250_000_000
    threshold = None
    for e in rules:
        m = re.search(r'interval_ms=(\d+)', e['text'])
        if m:
            interval = int(m.group(1)) * 1_000_000
        m = re.search(r'threshold_ns=(\d+)', e['text'])
        if m:
            threshold = int(m.group(1))
    grace = 3 * interval

    # Freshness, from the figures alone.
    prev = None
    for s in samples:
        s['fresh'] = (s['off'] is not None and s['delay'] not in (None, 0)
                      and (prev is None or (s['off'], s['delay']) !=
                           (prev['off'], prev['delay'])))
        prev = s

    for s in samples:
        if s['sync'] == '1' and s['delay'] == 0:
            fail('%d: in sync on the placeholder delay 0' % s['t'])
        if s['sync'] == '1' and s['off'] is None:
            fail('%d: in sync without an offset' % s['t'])

    rows = []

    def settle_after(t0, name):
        """Samples in sync after t0 before SETTLE fresh ones: wrong."""
        fresh = 0
        wrong = 0
        first_off = None
        for s in samples:
            if s['t'] <= t0:
                continue
            if s['fresh']:
                fresh += 1
                if first_off is None:
                    first_off = abs(s['off'])
            if s['sync'] == '1' and fresh < SETTLE:
                wrong += 1
                fail('%s: %d in sync after %d fresh sample(s) since the '
                     'event' % (name, s['t'], fresh))
            if fresh >= SETTLE:
                break
        return wrong, first_off

    def outage(name, t0, t1):
        win = [s for s in samples if t0 + grace <= s['t'] <= t1]
        # Samples in sync can still come until the grace ends (Syncs
        # taken before the fault): holdover grows from the last of them.
        before = [s for s in samples if s['t'] < t0 + grace and s['sync'] == '1']
        last_fresh = before[-1]['bound'] if before else None
        wrong = sum(1 for s in win if s['sync'] == '1')
        for s in win:
            if s['sync'] == '1':
                fail('%s: %d in sync while nothing can be measured'
                     % (name, s['t']))
        bounds = [s['bound'] for s in win
                  if s['sync'] in ('1', 'h') and s['bound'] is not None]
        held = [s for s in win if s['sync'] == 'h']
        if not held:
            fail('%s: no sample in holdover' % name)
        prevb = None
        for s in win:
            if s['bound'] is None or s['sync'] not in ('h', '0'):
                continue
            if last_fresh is not None and s['bound'] < last_fresh:
                fail('%s: %d bound %d below the last fresh bound %d'
                     % (name, s['t'], s['bound'], last_fresh))
            if prevb is not None and s['bound'] < prevb:
                fail('%s: %d bound shrank %d -> %d'
                     % (name, s['t'], prevb, s['bound']))
            if threshold and s['sync'] == 'h' and s['bound'] > threshold:
                fail('%s: %d holdover with bound %d past the threshold'
                     % (name, s['t'], s['bound']))
            prevb = s['bound']
        hb = [s['bound'] for s in held]
        if len(hb) >= 2 and hb[-1] <= hb[0]:
            fail('%s: holdover bound did not grow (%d -> %d)'
                 % (name, hb[0], hb[-1]))
        return wrong, bounds, len(held)

    def fmt_bounds(b):
        return '%d -> %d ns' % (b[0], b[-1]) if b else 'none'

    start = [e['t'] for e in events if e['name'] == 'start']
    if start:
        w, off = settle_after(start[0], 'start')
        rows.append(('start (placeholder 0/0)', w, 'n/a', off))
    if 'drop_start' in marks and 'drop_end' in marks:
        w, b, h = outage('Sync dropped', marks['drop_start'],
                         marks['drop_end'])
        # Out of sync by the end (grown past the threshold): settling
        # starts over; a short holdover need not.
        out_by_end = any(s['sync'] == '0' for s in samples
                         if marks['drop_start'] + grace <= s['t']
                         <= marks['drop_end'])
        w2, off = settle_after(marks['drop_end'], 'after the drop') \
            if out_by_end else (0, None)
        w += w2
        rows.append(('Sync dropped by the bridge (%d holdover)' % h, w,
                     fmt_bounds(b), off))
    if 'gm_stop' in marks and 'gm_start' in marks:
        w, b, h = outage('grandmaster stopped', marks['gm_stop'],
                         marks['gm_start'])
        w2, off = settle_after(marks['gm_start'], 'relock')
        rows.append(('grandmaster stopped (%d holdover)' % h, w,
                     fmt_bounds(b), None))
        rows.append(('relock after the grandmaster returns', w2, 'n/a', off))
    if 'kill' in marks:
        # The killed ptp4l's last readings, taken before the kill, can
        # reach the journal up to a sampling interval after it (its
        # output is read as it comes): they are fresh, not the new
        # ptp4l's. Settling is counted from then on.
        w, off = settle_after(marks['kill'] + interval, 'ptp4l killed')
        rows.append(('ptp4l killed and restarted', w, 'n/a', off))
    if 'reload' in marks:
        w, off = settle_after(marks['reload'], 'reload')
        rows.append(('reload (SIGHUP)', w, 'n/a', off))
        after = [e for e in rules if e['t'] >= marks['reload']]
        if not after:
            fail('reload: no rules event after it')
        elif 'threshold_ns=200001' not in after[0]['text']:
            fail('reload: rules event without the new threshold: %s'
                 % after[0]['text'])
    if 'sock_rm' in marks:
        lost = [e for e in events if e['name'] == 'mgmt_lost'
                and e['t'] >= marks['sock_rm']]
        if not lost:
            fail('socket removed: no mgmt_lost event')
        elif lost[0]['t'] - marks['sock_rm'] > 4_000_000_000:
            fail('socket removed: mgmt_lost after %.1f s'
                 % ((lost[0]['t'] - marks['sock_rm']) / 1e9))
        restart = [e for e in events if e['name'] == 'restart'
                   and e['t'] >= marks['sock_rm']]
        if not restart:
            fail('socket removed: ptp4l not restarted')
        w = sum(1 for s in samples if s['sync'] == '1' and
                marks['sock_rm'] + grace <= s['t'] <=
                (restart[0]['t'] if restart else s['t']))
        if w:
            fail('socket removed: %d sample(s) in sync while blind' % w)
        w2, off = settle_after(restart[0]['t'] if restart else
                               marks['sock_rm'], 'after the socket')
        rows.append(('management socket removed', w + w2,
                     'n/a', off))
        said = [st for st in statuses
                if any('not answering' in a or 'not running' in a
                       for a in st.get('alarms', []))]
        if statuses and not said:
            fail('socket removed: no status answer said why')
    if not rules:
        fail('no rules event in the journal')

    # Status never claims sync beside an alarm that denies it.
    deny = re.compile(r'not running|not answering|link down|holdover|'
                      r'not in sync')
    for st in statuses:
        for c in st.get('clocks', []):
            if not c.get('in_sync'):
                continue
            for a in st.get('alarms', []):
                if a.startswith(c['clock'] + ':') and deny.search(a):
                    fail('status: %s in sync beside alarm "%s"'
                         % (c['clock'], a))
        if st.get('in_sync') and any(deny.search(a)
                                     for a in st.get('alarms', [])):
            fail('status: in_sync true beside alarms %s' % st['alarms'])

    print('| case | claimed in sync wrongly | bound claimed meanwhile | '
          'first fresh offset afterwards |')
    print('|---|---|---|---|')
    for name, w, b, off in rows:
        print('| %s | %.2f s (%d samples) | %s | %s |'
              % (name, w * interval / 1e9, w, b,
                 '%d ns' % off if off is not None else '-'))
    print('%d status answers checked' % len(statuses))
    if report_only:
        return 0
    for f in fails[:40]:
        print('FAIL: syncd truth: ' + f)
    return 1 if fails else 0


if __name__ == '__main__':
    sys.exit(main())
