#!/usr/bin/env python3
"""ch_check.py — compare what a shipped query gave (JSONEachRow) with the
truth records_gen.py worked out.

  ch_check.py TRUTH.json KEY RESULT.jsonl [FILTER]

KEY names the truth's list (hops, hops_per_minute, hops_by_session,
transactions, order_to_ack); FILTER, for transactions.sql's three queries
in one output, picks rows: "host" (computed_by host, no minute), "minute"
(with a minute) or "sql" (computed_by sql). Prints one line per difference
and exits 1 if there is any.
"""
import calendar
import json
import math
import sys

INTS = ("messages", "out_of_sync", "holdover", "count", "min", "p50", "p90", "p99",
        "p999", "max", "bound_max_ns")
FLOATS = ("mean", "sd", "bound_mean_ns")


def close(a, b):
    if a is None or b is None:
        return a is None and b is None
    a, b = float(a), float(b)
    return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-6)


def key_of(r, kind):
    if kind.startswith("hops"):
        k = (r["from_host"], r["to_host"])
    else:
        k = (r["host"], r.get("kind", "order_to_ack"))
    if "minute" in r:
        m = r["minute"]
        if isinstance(m, str):	# "2026-11-26 01:00:00", UTC
            m = calendar.timegm(tuple(int(x) for x in
                                      m.replace("-", " ").replace(":", " ")
                                      .split()) + (0, 0, 0))
        k += (m,)
    return k


def num(v):
    # JSON output of 18.16 quotes 64-bit integers; NULL is null.
    if isinstance(v, str):
        return float(v) if "." in v or "e" in v.lower() else int(v)
    return v


def main():
    truth = json.load(open(sys.argv[1]))
    kind = sys.argv[2]
    filt = sys.argv[4] if len(sys.argv) > 4 else None
    want = truth[kind]
    if kind == "transactions" and filt == "minute":
        want = truth["transactions_per_minute"]
    got = []
    for line in open(sys.argv[3]):
        if not line.strip():
            continue
        r = json.loads(line)
        if filt == "host" and (r.get("computed_by") != "host" or "minute" in r):
            continue
        if filt == "minute" and "minute" not in r:
            continue
        if filt == "sql" and r.get("computed_by") != "sql":
            continue
        got.append(r)
    bad = []
    gk = {key_of(r, kind): r for r in got}
    wk = {key_of(r, kind): r for r in want}
    if len(gk) != len(got):
        bad.append("%d rows but %d keys: a key twice" % (len(got), len(gk)))
    for k in sorted(set(wk) - set(gk), key=str):
        bad.append("%s: missing (want %s)" % (k, wk[k]))
    for k in sorted(set(gk) - set(wk), key=str):
        bad.append("%s: not expected (got %s)" % (k, gk[k]))
    for k in sorted(set(gk) & set(wk), key=str):
        g, w = gk[k], wk[k]
        for f in INTS:
            if f in w and num(g.get(f)) != w[f]:
                bad.append("%s: %s is %s, want %s" % (k, f, g.get(f), w[f]))
        for f in FLOATS:
            if f in w and not close(num(g.get(f)), w[f]):
                bad.append("%s: %s is %s, want %s" % (k, f, g.get(f), w[f]))
    for b in bad:
        print("  %s %s: %s" % (kind, filt or "", b))
    print("%s%s: %d rows compared, %d differences" % (
        kind, " " + filt if filt else "", len(wk), len(bad)))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
