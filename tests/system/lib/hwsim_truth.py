#!/usr/bin/env python3
"""hwsim_truth.py — where tapless-hwsim's clocks really were.

Reads the truth journals tapless-hwsim writes (DIR/HOST.truth: every change
of a host's clocks, in order) and answers, for any true time, each clock's
value; and the true time at which a host's system clock read a value (to
place a sync journal's samples, stamped on that clock, in true time).

As a program:
  hwsim_truth.py bound DIR CLIENT GM JOURNAL CLOCK [--min-hold F]
                 [--blind NS,... --blind-ms MS]
    judges the client's sync journal (tapless-journal(5)) against the
    truth: each sample of CLOCK (phcN) in sync or in holdover must hold
    |client phcN - grandmaster phc0| <= bound_ns at the sample's true time.
    Prints the share held, the worst excess and the true offset's RMS;
    exits 1 when fewer than F (default 0.99) held or none was judged.
    --blind gives the instants (on the client's system clock, the
    journal's timescale) of faults injected into the clock itself (a
    step): the samples up to MS after each rest on a reading that may
    predate it, which no bound can cover, and are not judged (counted).
"""
import math
import sys


class Clock:
    def __init__(self):
        self.pieces = []        # (true_ns, value_ns, rate_ppb)

    def add(self, t, v, rate):
        self.pieces.append((t, v, rate))

    def piece(self, t):
        lo, hi = 0, len(self.pieces)
        while lo < hi:
            mid = (lo + hi) // 2
            if self.pieces[mid][0] <= t:
                lo = mid + 1
            else:
                hi = mid
        return self.pieces[max(lo - 1, 0)]

    def at(self, t):
        t0, v0, r = self.piece(t)
        return v0 + (t - t0) * (1 + r / 1e9)

    def true_at(self, value, after=None):
        """The first true time, not before after, at which the clock read
        value: a clock stepped back reads some values twice, and a
        journal's lines come in true-time order."""
        for i, (t0, v0, r) in enumerate(self.pieces):
            t = t0 + (value - v0) / (1 + r / 1e9)
            end = self.pieces[i + 1][0] if i + 1 < len(self.pieces) else None
            if t >= t0 and (end is None or t < end) and \
                    (after is None or t >= after):
                return t
        return None


def load(path):
    clocks = {}
    with open(path) as f:
        for line in f:
            if line.startswith('#') or not line.strip():
                continue
            t, name, v, native, adj = line.split()
            clocks.setdefault(name, Clock()).add(
                int(t), int(v), float(native) + float(adj))
    return clocks


def bound_check(argv):
    d, client, gm, journal, clock = argv[:5]
    min_hold = 0.99
    if '--min-hold' in argv:
        min_hold = float(argv[argv.index('--min-hold') + 1])
    blind = []
    if '--blind' in argv:
        ms = int(argv[argv.index('--blind-ms') + 1])
        blind = [(int(x), int(x) + ms * 1000000)
                 for x in argv[argv.index('--blind') + 1].split(',')]
    unjudged = 0
    c = load('%s/%s.truth' % (d, client))
    g = load('%s/%s.truth' % (d, gm))
    judged = held = 0
    worst = 0
    sq = 0.0
    last = None
    with open(journal) as f:
        for line in f:
            w = line.split()
            # 12 fields, or 13 since journal version 3 (CLASS).
            if len(w) not in (12, 13) or w[1] != 'sample' or w[2] != clock:
                continue
            t = c['sys'].true_at(int(w[0]), last)
            if t is None:
                continue
            last = t
            if w[10] not in ('1', 'h') or w[11] == '-':
                continue
            if any(lo <= int(w[0]) <= hi for lo, hi in blind):
                unjudged += 1
                continue
            off = c[clock].at(t) - g['phc0'].at(t)
            b = int(w[11])
            judged += 1
            sq += off * off
            if abs(off) <= b:
                held += 1
            else:
                worst = max(worst, abs(off) - b)
                if judged - held <= 5:
                    print('hwsim_truth: %s sync %s bound %d ns, true offset '
                          '%.0f ns' % (w[0], w[10], b, off))
    if not judged:
        print('hwsim_truth: no sample of %s in sync to judge' % clock)
        return 1
    share = held / judged
    print('hwsim_truth: %s %s: bound held in %d of %d samples (%.1f %%), '
          'worst excess %d ns, true offset rms %.0f ns; %d not judged '
          '(reading older than an injected fault)'
          % (client, clock, held, judged, 100 * share, worst,
             math.sqrt(sq / judged), unjudged))
    return 0 if share >= min_hold else 1


if __name__ == '__main__':
    if len(sys.argv) > 1 and sys.argv[1] == 'bound':
        sys.exit(bound_check(sys.argv[2:]))
    print(__doc__)
    sys.exit(2)
