#!/usr/bin/env python3
# follow_check.py OFFLINE.json FOLLOW.jsonl: the follower's intervals add up
# to the offline totals of the same files (tapless correlate --json): per
# hop, transaction and switch (topology method) the counts and the
# out-of-sync counts exactly and the count-weighted means within 1 ns; per
# host the packets and FIX messages read and the unmatched messages.
# Prints one line per result; exits 1 on a difference, on a line of the
# stream that is not a JSON object (named by its number), or when there is
# nothing to compare.
import json
import sys

if len(sys.argv) != 3:
    sys.exit("usage: follow_check.py OFFLINE.json FOLLOW.jsonl")
off = json.load(open(sys.argv[1]))
acc = {}
hosts = {}
bad = 0
for no, line in enumerate(open(sys.argv[2], errors="replace"), 1):
    try:
        r = json.loads(line)
        if not isinstance(r, dict):
            raise ValueError("not an object")
        t = r.get("type")
        if t == "host":
            h = hosts.setdefault(r["host"], [0, 0, 0])
            h[0] += r["packets"]
            h[1] += r["messages"]
            h[2] += r["unmatched"]
            continue
        if t == "hop":
            k = ("hop", r["from"], r["to"])
        elif t == "txn":
            k = ("txn", r["kind"], r["host"])
        elif t == "switch":
            k = ("switch", r["switch"], r["from"], r["to"])
        else:
            continue
        n, s, o = acc.get(k, (0, 0.0, 0))
        lat = r["latency_ns"]
        if lat["count"]:
            s += lat["mean"] * lat["count"]
        acc[k] = (n + lat["count"], s, o + r["out_of_sync"]["messages"])
    except (ValueError, KeyError, TypeError) as e:
        print("%s:%d: not a line of the stream (%s): %.120s" % (sys.argv[2], no, e, line.rstrip()))
        bad += 1

want = {}
for h in off["hops"]:
    if h["flow"] == "all" and "rate" not in h:
        want[("hop", h["from"], h["to"])] = (h["latency_ns"]["count"], h["latency_ns"]["mean"], h["out_of_sync"]["messages"])
for t in off["transactions"]:
    if "rate" not in t:
        want[("txn", t["name"], t["host"])] = (t["latency_ns"]["count"], t["latency_ns"]["mean"], 0)
for w in off.get("switches", []):
    if "rate" not in w and w.get("method") == "topology":
        want[("switch", w["name"], w["from"], w["to"])] = (w["latency_ns"]["count"], w["latency_ns"]["mean"], w.get("out_of_sync", {}).get("messages", 0))
for k, (n, m, o) in sorted(want.items()):
    fn, fs, fo = acc.get(k, (0, 0.0, 0))
    fm = fs / fn if fn else None
    ok = fn == n and fo == o and (n == 0 or abs(fm - m) <= 1.0)
    print("%-40s offline n %7d mean %12s oos %5d | follow n %7d mean %12s oos %5d %s" % (
        " ".join(k), n, "%.3f" % m if n else "-", o, fn, "%.3f" % fm if fn else "-", fo, "ok" if ok else "DIFFERENT"))
    bad += not ok
for k in acc:
    if k not in want and acc[k][0]:
        print("only in follow:", k, acc[k])
        bad += 1
for i in off.get("inputs", []):
    h = i["host"]
    o = (i["packets"], i["fix_messages"], i["seen_only_here"])
    f = tuple(hosts.get(h, (0, 0, 0)))
    ok = o == f
    print("%-40s offline packets %7d messages %7d unmatched %5d | follow %7d %7d %5d %s" % (
        "host " + h, o[0], o[1], o[2], f[0], f[1], f[2], "ok" if ok else "DIFFERENT"))
    bad += not ok
print("%d results, %d hosts, %d different or bad" % (len(want), len(off.get("inputs", [])), bad))
sys.exit(1 if bad or not want else 0)
