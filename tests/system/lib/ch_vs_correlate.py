#!/usr/bin/env python3
"""ch_vs_correlate.py — the shipped queries over what tapless export wrote
against tapless correlate --json over the same captures.

  ch_vs_correlate.py CORRELATE.json HOPS.jsonl TXN.jsonl

Per hop (flow "all", no rate): messages, out_of_sync, holdover, count, min, max and
the bound equal; mean, SD and the bound's mean within 1e-6; percentiles
equal where the correlator's histogram is exact (|v| < 16384 ns), else the
SQL's exact one at most histogram_error_ns above the correlator's. The
same for each transaction the hosts computed (transactions.sql, computed_by
host), and transactions.sql's own order_to_ack from the records (computed_by
sql) equal to the hosts'. Exits 1 on any difference.
"""
import json
import math
import sys

EXACT = 16384


def num(v):
    if isinstance(v, str):
        return float(v) if "." in v or "e" in v.lower() else int(v)
    return v


def close(a, b):
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(float(a), float(b), rel_tol=1e-6, abs_tol=1e-6)


def compare(what, c, s, err, bad):
    """c: the correlator's latency_ns object; s: the SQL row."""
    for f in ("count", "min", "max"):
        if num(s.get(f)) != c[f]:
            bad.append("%s: %s %s, correlate %s" % (what, f, s.get(f), c[f]))
    for f in ("mean", "sd"):
        if not close(num(s.get(f)), c[f]):
            bad.append("%s: %s %s, correlate %s" % (what, f, s.get(f), c[f]))
    for f in ("p50", "p90", "p99", "p999"):
        v, w = num(s.get(f)), c[f]
        if abs(w) < EXACT:
            ok = v == w
        else:
            ok = w <= v <= w + err
        if not ok:
            bad.append("%s: %s %s, correlate %s (histogram error %d)" %
                       (what, f, v, w, err))


def main():
    c = json.load(open(sys.argv[1]))
    hops = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
    txns = [json.loads(l) for l in open(sys.argv[3]) if l.strip()]
    err = c.get("histogram_error_ns") or 0
    bad = []
    want = {(h["from"], h["to"]): h for h in c["hops"]
            if h["flow"] == "all" and h.get("rate") is None}
    got = {(h["from_host"], h["to_host"]): h for h in hops}
    if set(want) != set(got):
        bad.append("hops: correlate has %s, SQL %s" % (sorted(want), sorted(got)))
    for k in sorted(set(want) & set(got)):
        w, g = want[k], got[k]
        what = "hop %s->%s" % k
        if num(g["messages"]) != w["messages"]:
            bad.append("%s: messages %s, correlate %s" % (what, g["messages"], w["messages"]))
        if num(g["out_of_sync"]) != w["out_of_sync"]["messages"]:
            bad.append("%s: out_of_sync %s, correlate %s" % (
                what, g["out_of_sync"], w["out_of_sync"]["messages"]))
        if num(g["holdover"]) != w["holdover"]:
            bad.append("%s: holdover %s, correlate %s" % (
                what, g["holdover"], w["holdover"]))
        if num(g["bound_max_ns"]) != w.get("sync_error_bound_ns"):
            bad.append("%s: bound_max_ns %s, correlate %s" % (
                what, g["bound_max_ns"], w.get("sync_error_bound_ns")))
        if not close(num(g["bound_mean_ns"]), w.get("sync_error_bound_mean_ns")):
            bad.append("%s: bound_mean_ns %s, correlate %s" % (
                what, g["bound_mean_ns"], w.get("sync_error_bound_mean_ns")))
        compare(what, w["latency_ns"], g, err, bad)
    want = {(t["host"], t["name"]): t for t in c["transactions"]
            if t.get("rate") is None}
    host = {(t["host"], t["kind"]): t for t in txns
            if t.get("computed_by") == "host" and "minute" not in t}
    if set(want) != set(host):
        bad.append("transactions: correlate has %s, SQL %s" % (sorted(want), sorted(host)))
    for k in sorted(set(want) & set(host)):
        compare("transaction %s %s" % k, want[k]["latency_ns"], host[k], err, bad)
    sql = [t for t in txns if t.get("computed_by") == "sql"]
    for t in sql:
        h = host.get((t["host"], "order_to_ack"))
        if not h:
            bad.append("order_to_ack at %s from SQL, none from the host" % t["host"])
            continue
        for f in ("count", "min", "mean", "p50", "p90", "p99", "p999", "max", "sd"):
            if not close(num(t[f]), num(h[f])):
                bad.append("order_to_ack at %s: %s %s by SQL, %s by the host" % (
                    t["host"], f, t[f], h[f]))
    if not sql:
        bad.append("no order_to_ack computed by SQL")
    for b in bad:
        print("  " + b)
    print("correlate vs SQL: %d hops, %d transactions, %d differences" % (
        len(got), len(host), len(bad)))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
