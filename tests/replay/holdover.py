#!/usr/bin/env python3
"""holdover.py — the two halves of test_holdover.sh.

  holdover.py journal --drift PPB --threshold NS --from S --to S JOURNAL
      JOURNAL (tapless sim's) as tapless-syncd would write it through an
      outage, on standard output: a rules event (drift_ppb, threshold_ns)
      for the samples' clock before them; the samples from FROM to TO
      seconds after its first one are measured no more: in holdover (sync
      h, offset and delay -) with the last fresh bound grown by drift_ppb
      for the time since, rounded up, while that is within the threshold,
      then out of sync (sync 0, bound -) until TO.

  holdover.py check --drift PPB ALGO.journal VENUE.journal CORR.json SAMPLES
      Every hop sample of the samples file against the journals, read as
      tapless-correlate(8) says: each end's state and bound at its stamp
      (the tx stamp is time_ns, the rx stamp time_ns + latency_ns); the
      switch samples as their hop's; the JSON's per-hop and per-switch
      holdover and out-of-sync counts as the file's. Prints what differs,
      exits 1 if anything does.
"""
import argparse
import bisect
import json
import sys

NS = 1000000000
DEFAULT_DRIFT = 100000          # BOUND_DEFAULT_DRIFT_PPB
MAX_AGE = 3 * NS                # --sync-max-age's default


def ceil_div(a, b):
    return -(-a // b)


def edit(a):
    lines = open(a.journal).read().splitlines()
    samples = [ln.split(" ") for ln in lines
               if not ln.startswith("#") and ln.split(" ")[1] == "sample"]
    clock = samples[0][2]
    j0 = int(samples[0][0])
    lo, hi = j0 + round(a.from_s * NS), j0 + round(a.to_s * NS)
    out, ruled, fresh, over = [], False, None, False
    for ln in lines:
        f = ln.split(" ")
        if ln.startswith("#") or f[1] != "sample":
            out.append(ln)
            continue
        if not ruled:
            out.append("%d event %s rules drift_ppb=%d threshold_ns=%d" % (
                int(f[0]), clock, a.drift, a.threshold))
            ruled = True
        t = int(f[0])
        if f[2] == clock and lo <= t < hi:
            g = fresh[1] + ceil_div((t - fresh[0]) * a.drift, NS)
            over = over or g > a.threshold
            f[4] = f[5] = "-"
            f[10], f[11] = ("0", "-") if over else ("h", str(g))
        elif f[2] == clock and f[10] == "1" and f[11] != "-":
            fresh = (t, int(f[11]))
        out.append(" ".join(f))
    print("\n".join(out))


class Journal:
    """One host's journal: per clock, its samples in time order (the later
    line last at one instant) with the drift of the clock's last rules
    event before each."""

    def __init__(self, path):
        self.clocks = {}
        drift = {}
        for n, ln in enumerate(open(path)):
            f = ln.split()
            if not f or f[0].startswith("#"):
                continue
            if f[1] == "event" and f[3] == "rules":
                for w in f[4:]:
                    if w.startswith("drift_ppb="):
                        drift[f[2]] = int(w[10:])
            elif f[1] == "sample":
                b = -1 if f[11] == "-" else int(f[11])
                self.clocks.setdefault(f[2], []).append(
                    (int(f[0]), n, f[10], b, drift.get(f[2], DEFAULT_DRIFT)))
        for v in self.clocks.values():
            v.sort()
        self.holdover = sum(1 for v in self.clocks.values()
                            for s in v if s[2] == "h")

    def at(self, t):
        """("in" | "holdover" | "out", bound) at UTC t, one clock only."""
        (pts,) = self.clocks.values()
        k = bisect.bisect_right(pts, (t, float("inf")))
        if k == 0:
            return "out", -1
        ts, _, sync, b, drift = pts[k - 1]
        if t - ts > MAX_AGE or sync == "0":
            return "out", -1
        if sync == "1":
            return "in", b
        return "holdover", b if b < 0 else b + ceil_div((t - ts) * drift, NS)


def hop(a, b):
    """A sample's state and bound from its two ends'."""
    if "out" in (a[0], b[0]):
        return "out", -1
    sync = "holdover" if "holdover" in (a[0], b[0]) else "in"
    return sync, a[1] + b[1] if a[1] >= 0 and b[1] >= 0 else -1


def check(a):
    j = {"algo": Journal(a.algo), "venue": Journal(a.venue)}
    corr = json.load(open(a.corr))
    inp = {i["host"]: i for i in corr["inputs"]}
    # Stamps to the journals' UTC (the results are on UTC when a journal
    # gave TAI - UTC, tapless-correlate(8), Timescales), and the
    # resolution term.
    utc_known = any(i["journal"] and i["journal"]["utc_offset_s"] is not None
                    for i in inp.values())
    to_utc = {h: (-37 * NS if i["timescale"] == "tai" and not utc_known
                  else 0) for h, i in inp.items()}
    res = {h: i["resolution_ns"] - 1 for h, i in inp.items()}

    def end(h, t):
        s, b = j[h].at(t + to_utc[h])
        return s, b + res[h] if s != "out" and b >= 0 else b

    bad, count, prev = [], {}, None
    hold_bounds, in_bounds, venue_hold = [], [], []
    for n, ln in enumerate(open(a.samples), 1):
        f = ln.split()
        if not f or f[0].startswith("#") or f[0] != "main":
            continue
        kind, fr, to, t, lat, sync, b = f[1], f[2], f[3], int(f[4]), \
            int(f[5]), f[6], int(f[7])
        if kind == "hop":
            tx, rx = end(fr, t), end(to, t + lat)
            want = hop(tx, rx)
            prev = (sync, b)
            if want[0] == "holdover":
                hold_bounds.append(b)
                if fr == "venue":
                    venue_hold.append((t, b))
            elif want[0] == "in":
                in_bounds.append(b)
            if (j["venue"].at(t + to_utc["venue"])[0] == "out" and fr == "venue" or
                    j["venue"].at(t + lat + to_utc["venue"])[0] == "out" and to == "venue") \
                    and sync != "out":
                bad.append("line %d: %s at a venue stamp its journal says "
                           "out of sync for" % (n, sync))
        elif kind == "switch":
            want = prev
        else:
            continue
        k = (kind, fr, to)
        c = count.setdefault(k, {"all": 0, "holdover": 0, "out": 0})
        c["all"] += 1
        if sync in ("holdover", "out"):
            c[sync] += 1
        if (sync, b) != tuple(want):
            bad.append("line %d: %s %s->%s at %d: %s %d, the journals give %s %d"
                       % (n, kind, fr, to, t, sync, b, want[0], want[1]))
    hold = sum(c["holdover"] for k, c in count.items() if k[0] == "hop")
    out = sum(c["out"] for k, c in count.items() if k[0] == "hop")
    if not hold or not out:
        bad.append("hop samples: %d in holdover, %d out of sync: want both"
                   % (hold, out))
    if hold_bounds and in_bounds and min(hold_bounds) <= max(in_bounds):
        bad.append("a holdover bound %d not above the in-sync ones (up to %d)"
                   % (min(hold_bounds), max(in_bounds)))
    # Growing with the venue's stamp (the other end's bound moves by its
    # in-sync spread at most).
    spread = max(in_bounds) - min(in_bounds) if in_bounds else 0
    venue_hold.sort()
    for (t0, b0), (t1, b1) in zip(venue_hold, venue_hold[1:]):
        if b1 < b0 - spread:
            bad.append("holdover bound shrinks: %d at %d, %d at %d"
                       % (b0, t0, b1, t1))
            break
    for key, objs in (("hop", corr["hops"]), ("switch", corr["switches"])):
        for o in objs:
            if o.get("flow", "all") != "all" or "rate" in o or \
                    o.get("method", "topology") != "topology":
                continue
            c = count.get((key, o["from"], o["to"]),
                          {"all": 0, "holdover": 0, "out": 0})
            got = (o["holdover"], o["out_of_sync"]["messages"])
            if got != (c["holdover"], c["out"]):
                bad.append("%s %s->%s: JSON holdover %d out_of_sync %d, "
                           "the samples file %d and %d" % (
                               key, o["from"], o["to"], got[0], got[1],
                               c["holdover"], c["out"]))
            if key == "hop" and o["messages"] != c["all"]:
                bad.append("hop %s->%s: JSON messages %d, the samples file %d"
                           % (o["from"], o["to"], o["messages"], c["all"]))
    for b in bad[:20]:
        print(b)
    print("%d hop samples in holdover, %d out of sync; %d differences"
          % (hold, out, len(bad)))
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("journal")
    e.add_argument("--drift", type=int, required=True)
    e.add_argument("--threshold", type=int, required=True)
    e.add_argument("--from", dest="from_s", type=float, required=True)
    e.add_argument("--to", dest="to_s", type=float, required=True)
    e.add_argument("journal")
    c = sub.add_parser("check")
    c.add_argument("algo")
    c.add_argument("venue")
    c.add_argument("corr")
    c.add_argument("samples")
    a = ap.parse_args()
    if a.cmd == "journal":
        edit(a)
        return 0
    return check(a)


if __name__ == "__main__":
    sys.exit(main())
