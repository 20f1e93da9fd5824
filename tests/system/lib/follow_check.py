#!/usr/bin/env python3
# follow_check.py OFFLINE.json FOLLOW.jsonl: the follower's intervals add up
# to the offline totals (counts exact, means within 1 ns).
import json, sys
off = json.load(open(sys.argv[1]))
acc = {}
for line in open(sys.argv[2]):
    r = json.loads(line)
    t = r.get("type")
    if t == "hop":
        k = ("hop", r["from"], r["to"])
    elif t == "txn":
        k = ("txn", r["kind"], r["host"])
    elif t == "switch":
        k = ("switch", r["switch"], r["from"], r["to"])
    else:
        continue
    n, s, o = acc.get(k, (0, 0.0, 0))
    if r["count"]:
        s += r["mean_ns"] * r["count"]
    acc[k] = (n + r["count"], s, o + r["out_of_sync"])
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
bad = 0
for k, (n, m, o) in sorted(want.items()):
    fn, fs, fo = acc.get(k, (0, 0.0, 0))
    fm = fs / fn if fn else None
    ok = fn == n and fo == o and (n == 0 or abs(fm - m) <= 1.0)
    print("%-40s offline n %7d mean %12s oos %5d | follow n %7d mean %12s oos %5d %s" % (
        " ".join(k), n, "%.3f" % m if n else "-", o, fn, "%.3f" % fm if fn else "-", fo, "ok" if ok else "DIFFERENT"))
    bad += not ok
for k in acc:
    if k not in want and acc[k][0]:
        print("only in follow:", k, acc[k]); bad += 1
print("%d results, %d different" % (len(want), bad))
sys.exit(1 if bad or not want else 0)
