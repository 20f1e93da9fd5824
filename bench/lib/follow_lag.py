#!/usr/bin/env python3
"""follow_lag.py FOLLOW.jsonl SAMPLES STOP_NS INTERVAL_NS

The lag of a tapless correlate --follow run, for bench/follow.sh: for every
hop and tick_to_trade sample in SAMPLES (the --samples file), the
emitted_ns of the interval line it was counted in minus its time_ns.

A sample belongs to the interval holding its later stamp (a hop's receive
stamp, time_ns + latency_ns; a transaction's order, time_ns), as
tapless-correlate(8) says under Intervals. The few made after their
interval closed go to the next one: the samples file is in the order the
samples were made, so past an interval line's count, the rest of that
interval's samples are the late ones, and their lag is to the next
interval line of the same result. Intervals whose lines came out at or
after STOP_NS (the SIGTERM) are left out: their emitted_ns is the stop, not
the live stream.

The lag is given twice: over every interval up to the stop ("all"), and
over the intervals that ended before the last tick_to_trade sample's
stamp, within 1000 market data messages of the end of the workload
("steady"): the last interval that holds traffic closes only once each
host's files show data past its end, which without capd heartbeats comes
with the next flush after the traffic stopped, or at --stall.

Prints one line of JSON: the lag percentiles (ms), the counts, and the
messages each host's lines counted (all, and those before the stop).
"""
import json
import sys


def pct(sorted_vals, p):
    """Nearest rank, as tapless prints them."""
    if not sorted_vals:
        return None
    k = max(0, min(len(sorted_vals) - 1, -(-len(sorted_vals) * p // 100) - 1))
    return sorted_vals[int(k)]


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    follow, samples = sys.argv[1], sys.argv[2]
    stop_ns, ivl = int(sys.argv[3]), int(sys.argv[4])
    # (kind, from, to) -> {start_ns: [emitted_ns, count]}
    lines = {}
    msgs = {}
    msgs_live = {}
    late_packets = 0
    with open(follow) as f:
        for n, text in enumerate(f, 1):
            try:
                o = json.loads(text)
            except ValueError as e:
                sys.exit("%s:%d: not JSON: %s" % (follow, n, e))
            t = o.get("type")
            if t == "hop":
                key = ("hop", o["from"], o["to"])
            elif t == "txn":
                key = (o["kind"], o["host"], o["host"])
            elif t == "host":
                h = o["host"]
                msgs[h] = msgs.get(h, 0) + o["messages"]
                if o["emitted_ns"] < stop_ns:
                    msgs_live[h] = msgs_live.get(h, 0) + o["messages"]
                late_packets += o["late"]
                continue
            else:
                continue
            lines.setdefault(key, {})[o["start_ns"]] = [o["emitted_ns"],
                                                       o["count"] + (o["out_of_sync"] or 0)]
    # (lag, interval end, kind, late) per sample counted before the stop
    got = []
    seen = {}
    stopped = unplaced = 0
    with open(samples) as f:
        for n, text in enumerate(f, 1):
            if text.startswith("#"):
                continue
            fld = text.split()
            if len(fld) < 6:
                sys.exit("%s:%d: not a sample line" % (samples, n))
            kind = fld[1]
            if kind not in ("hop", "tick_to_trade") or fld[0] != "main":
                continue
            t = int(fld[4])
            later = t + int(fld[5]) if kind == "hop" else t
            key = (kind, fld[2], fld[3])
            start = later // ivl * ivl
            done = seen.get((key, start), 0)
            seen[(key, start)] = done + 1
            res = lines.get(key, {})
            late = start in res and done >= res[start][1]
            if late:
                start += ivl
                while start not in res and start <= max(res, default=0):
                    start += ivl
            if start not in res:
                unplaced += 1
                continue
            emitted = res[start][0]
            if emitted >= stop_ns:
                stopped += 1
                continue
            got.append((emitted - t, start + ivl, kind, late, t))
    in_file = sum(seen.values())
    in_lines = sum(c for key, res in lines.items() if key[0] in ("hop", "tick_to_trade")
                   for _, c in res.values())
    end_ns = max((g[4] for g in got if g[2] == "tick_to_trade"), default=0)
    both = sorted(g[0] for g in got)
    ttt = sorted(g[0] for g in got if g[2] == "tick_to_trade")
    steady = sorted(g[0] for g in got if g[1] <= end_ns)
    late_lags = [g[0] for g in got if g[3]]
    # How long after its end each steady interval's lines came out.
    close = sorted(e - s - ivl for res in lines.values() for s, (e, _) in res.items()
                   if s + ivl <= end_ns and e < stop_ns)
    ms = lambda v: None if v is None else round(v / 1e6, 1)
    intervals = {s for res in lines.values() for s, (e, _) in res.items() if e < stop_ns}
    print(json.dumps({
        "samples": len(both), "tick_to_trade": len(ttt),
        "late": len(late_lags), "late_max_ms": ms(max(late_lags, default=None)),
        "in_file": in_file, "in_lines": in_lines, "at_stop": stopped, "unplaced": unplaced, "intervals": len(intervals),
        "p50_ms": ms(pct(both, 50)), "p99_ms": ms(pct(both, 99)),
        "max_ms": ms(both[-1] if both else None),
        "steady": len(steady), "steady_p50_ms": ms(pct(steady, 50)),
        "steady_p99_ms": ms(pct(steady, 99)),
        "steady_max_ms": ms(steady[-1] if steady else None),
        "close_p50_ms": ms(pct(close, 50)), "close_max_ms": ms(close[-1] if close else None),
        "ttt_p50_ms": ms(pct(ttt, 50)), "ttt_p99_ms": ms(pct(ttt, 99)),
        "messages": msgs, "messages_live": msgs_live, "late_packets": late_packets,
    }))


if __name__ == "__main__":
    main()
