#!/usr/bin/env python3
"""records_gen.py — synthetic rows for tapless.records (and
tapless.transactions), in the column order of scripts/clickhouse/schema.sql,
as TSV for clickhouse-client (INSERT ... FORMAT TSV).

  records_gen.py test DIR    the test set of test_clickhouse_sql.sh:
                             DIR/records.tsv, DIR/transactions.tsv and
                             DIR/truth.json, the results each shipped query
                             must give, worked out here from the generated
                             observations by a plain reading of the
                             correlator's rules, not from the SQL
  records_gen.py bulk N      N rows for the bench on stdout: two hosts, N/2
                             messages each seen leaving one and arriving at
                             the other (TCP orders and reports, UDP market
                             data)

Everything is seeded: the same call gives the same bytes.
"""
import datetime
import json
import math
import random
import sys

NS = 1000000000
WINDOW = NS			# the correlator's matching window (--window)
DAY0 = 1795651200 * NS		# 2026-11-26 00:00:00 UTC
DIRS = ("unknown", "in", "out")
SYNCS = ("none", "in", "out")


def day_of(ts):
    return datetime.datetime.fromtimestamp(
        ts // NS, datetime.timezone.utc).strftime("%Y-%m-%d")


def row(r):
    """One TSV line from a record dict (missing fields get defaults)."""
    ts = r["ts"]
    return "\t".join(str(x) for x in (
        day_of(ts), r["host"], r.get("iface", "eth0"), r["dir"],
        r["proto"], r["src_addr"], r["src_port"], r["dst_addr"],
        r["dst_port"], r["seq"], r.get("sender_comp", ""),
        r.get("target_comp", ""), r.get("msg_seq", 0),
        r.get("msg_type", ""), r.get("cl_ord_id", ""), r.get("symbol", ""),
        r.get("side", ""), r.get("ord_status", ""), ts,
        r.get("ts_last", ts), r.get("wire", 120), r.get("stamp", "sw"),
        r.get("stamped_by", "capture"), r.get("sync", "none"),
        r.get("bound_ns", -1), r.get("file", r["host"] + ".pcapng"),
        r.get("offset", 0)))


# ---- the truth: the correlator's rules over a list of records ----

def rank(sorted_v, pct):
    """Nearest rank, as summary_rank() in src/base/summary.c."""
    n = len(sorted_v)
    r = math.ceil(pct / 100.0 * n - 1e-9)
    r = min(max(r, 1), n)
    return sorted_v[r - 1]


def summary(v):
    v = sorted(v)
    n = len(v)
    if not n:
        return {"count": 0}
    mean = sum(v) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in v) / (n - 1)) if n > 1 else 0.0
    return {"count": n, "min": v[0], "mean": mean, "p50": rank(v, 50),
            "p90": rank(v, 90), "p99": rank(v, 99), "p999": rank(v, 99.9),
            "max": v[-1], "sd": sd}


def flow(r):
    return (r["proto"], r["src_addr"], r["src_port"], r["dst_addr"],
            r["dst_port"])


def dedup(obs):
    """One observation per host per message: a second one at the same host
    within the window after an earlier one is a duplicate (earliest kept).
    obs: records of one message key (flow + seq, or session key)."""
    keep = []
    # Among equal stamps the larger (dir, sync, bound) first: a row with a
    # sync state beats the same row without (an export run again).
    rank = {"unknown": 0, "none": 0, "in": 1, "out": 2, "holdover": 3}
    for o in sorted(obs, key=lambda r: (r["ts"], -rank[r["dir"]],
                                        -rank[r["sync"]], -r["bound_ns"],
                                        r["_i"])):
        if any(k["host"] == o["host"] and o["ts"] - k["ts"] <= WINDOW
               for k in keep):
            continue
        keep.append(o)
    # A second copy at the same host more than the window later is kept,
    # but only if no kept copy of that host lies within the window of it.
    return keep


def pair(a, b):
    """The sample (tx, rx) two observations make, or None (corr_pair())."""
    da, db = a["dir"], b["dir"]
    if da == "unknown" and db != "unknown":
        da = "in" if db == "out" else "out"
    elif db == "unknown" and da != "unknown":
        db = "in" if da == "out" else "out"
    if da == "out" and db == "in":
        return a, b
    if db == "out" and da == "in":
        return b, a
    return None


def samples_of(groups):
    """groups: lists of records of one message. Yields (tx, rx)."""
    for obs in groups:
        keep = dedup(obs)
        for i in range(len(keep)):
            for j in range(i + 1, len(keep)):
                a, b = keep[i], keep[j]
                if a["host"] == b["host"] or abs(a["ts"] - b["ts"]) > WINDOW:
                    continue
                p = pair(a, b)
                if p:
                    yield p


def hop_rows(samples, per_minute=False):
    """Per (from, to) [and minute]: what hops.sql returns."""
    acc = {}
    for tx, rx in samples:
        k = (tx["host"], rx["host"])
        if per_minute:
            k += ((tx["ts"] // (60 * NS)) * 60,)
        acc.setdefault(k, []).append((tx, rx))
    out = []
    for k in sorted(acc):
        lat, bounds, oos, hold = [], [], 0, 0
        bounded = ("in", "holdover")
        for tx, rx in acc[k]:
            if tx["sync"] == "out" or rx["sync"] == "out":
                oos += 1
                continue
            lat.append(rx["ts"] - tx["ts"])
            both = tx["sync"] in bounded and rx["sync"] in bounded
            if both and "holdover" in (tx["sync"], rx["sync"]):
                hold += 1
            if (both and
                    tx["bound_ns"] >= 0 and rx["bound_ns"] >= 0):
                bounds.append(tx["bound_ns"] + rx["bound_ns"])
            else:
                bounds.append(None)
        s = summary(lat)
        r = {"from_host": k[0], "to_host": k[1]}
        if per_minute:
            r["minute"] = k[2]
        r["messages"] = len(acc[k])
        r["out_of_sync"] = oos
        r["holdover"] = hold
        r.update(s)
        known = bounds and None not in bounds
        r["bound_max_ns"] = max(bounds) if known else None
        r["bound_mean_ns"] = sum(bounds) / len(bounds) if known else None
        out.append(r)
    return out


def by_flow(recs):
    g = {}
    for r in recs:
        g.setdefault(flow(r) + (r["seq"],), []).append(r)
    return list(g.values())


def by_session(recs):
    """corr_pair_by_session(): messages on flows one host alone captured,
    paired across hosts by (35, 49, 56, 34) when all four are there."""
    hosts = {}
    for r in recs:
        hosts.setdefault(flow(r), set()).add(r["host"])
    g = {}
    for r in recs:
        if len(hosts[flow(r)]) != 1:
            continue
        if not (r["msg_type"] and r["sender_comp"] and r["target_comp"] and
                r["msg_seq"]):
            continue
        k = (r["msg_type"], r["sender_comp"], r["target_comp"], r["msg_seq"])
        g.setdefault(k, []).append(r)
    return list(g.values())


def order_to_ack(recs):
    """Per host: first 35=D out and first 35=8 39=0 in of each ClOrdID,
    within the window of each other (corr_txn.c)."""
    tx, ack = {}, {}
    for r in recs:
        k = (r["host"], r["cl_ord_id"])
        if not r["cl_ord_id"]:
            continue
        if r["msg_type"] == "D" and r["dir"] == "out":
            tx[k] = min(tx.get(k, r["ts"]), r["ts"])
        if (r["msg_type"] == "8" and r["dir"] == "in" and
                r["ord_status"] == "0"):
            ack[k] = min(ack.get(k, r["ts"]), r["ts"])
    lat = {}
    for k in tx:
        if k in ack and abs(ack[k] - tx[k]) <= WINDOW:
            lat.setdefault(k[0], []).append(ack[k] - tx[k])
    return [dict(host=h, **summary(v)) for h, v in sorted(lat.items())]


# ---- the test set ----

class Gen:
    def __init__(self, seed):
        self.rnd = random.Random(seed)
        self.recs = []
        self.t = DAY0 + 3600 * NS	# 01:00 UTC
        self.tcp_seq = {}

    def tick(self, ns=None):
        self.t += ns if ns is not None else self.rnd.randint(200000, 3000000)
        return self.t

    def rec(self, **kw):
        kw.setdefault("_i", len(self.recs))
        self.recs.append(kw)
        return kw

    def message(self, f, obs, **fix):
        """One FIX message on flow f = (proto, src, sport, dst, dport): obs
        is a list of (host, dir, delay_ns, sync, bound_ns[, iface])."""
        proto = f[0]
        if proto == 6:
            seq = self.tcp_seq.get(f, self.rnd.randint(0, 2**32 - 1))
            self.tcp_seq[f] = (seq + self.rnd.randint(80, 300)) % 2**32
        else:
            seq = self.rnd.randint(0, 2**32 - 1)
        t = self.tick()
        for o in obs:
            host, d, delay, sync, bound = o[:5]
            self.rec(host=host, dir=d, proto=proto, src_addr=f[1],
                     src_port=f[2], dst_addr=f[3], dst_port=f[4], seq=seq,
                     ts=t + delay, ts_last=t + delay + 1000, sync=sync,
                     bound_ns=bound, iface=o[5] if len(o) > 5 else "eth0",
                     offset=len(self.recs) * 64, **fix)
        return seq, t


def fixf(rnd, mtype, sender, target, mseq, **kw):
    d = dict(msg_type=mtype, sender_comp=sender, target_comp=target,
             msg_seq=mseq, cl_ord_id="", symbol="", side="", ord_status="")
    d.update(kw)
    return d


def make_test(dirname):
    g = Gen(23)
    rnd = g.rnd
    A, B, C, GW, E = "algo", "venue", "md", "gw", "exch"
    tcp_ab = (6, "198.18.0.1", 40001, "198.18.0.2", 9001)
    tcp_ba = (6, "198.18.0.2", 9001, "198.18.0.1", 40001)
    udp_cb = (17, "198.18.0.3", 5000, "239.1.1.1", 5000)	# md -> both
    v6 = (6, "2001:db8::1", 40002, "2001:db8::2", 9002)
    mseq = {"AB": 0, "BA": 0}
    oid = 0

    def lat():
        return rnd.choice([rnd.randint(8000, 30000), rnd.randint(8000, 30000),
                           rnd.randint(30000, 200000), rnd.randint(-500, 500)])

    def sync_pair():
        # Mostly in sync with bounds; some none; a few out; a few in
        # holdover (bounded, wider).
        x = rnd.random()
        if x < 0.08:
            return ("out", 900), ("in", 40)
        if x < 0.12:
            return ("in", 50), ("out", -1)
        if x < 0.15:
            return ("holdover", rnd.randint(90, 900)), ("in", 40)
        if x < 0.17:
            return ("holdover", 300), ("out", -1)
        return ("in", rnd.randint(10, 90)), ("in", rnd.randint(10, 90))

    # Orders algo -> venue and their acks, both sides in sync with bounds
    # (a hop whose every in-sync sample has a bound).
    for i in range(300):
        oid += 1
        mseq["AB"] += 1
        (sa, ba), (sb, bb) = sync_pair()
        cl = "ORD%06d" % oid
        sym = rnd.choice(["EURUSD", "GBPUSD", "USDJPY"])
        side = rnd.choice(["1", "2"])
        g.message(tcp_ab, [(A, "out", 0, sa, ba), (B, "in", lat(), sb, bb)],
                  **fixf(rnd, "D", "ALGO", "VENUE", mseq["AB"],
                         cl_ord_id=cl, symbol=sym, side=side))
        if i % 7 == 3:
            continue	# no ack for this one
        if i % 11 == 4:	# filled at once, no ack: no order_to_ack
            mseq["BA"] += 1
            g.tick(rnd.randint(20000, 400000))
            g.message(tcp_ba, [(B, "out", 0, "in", 10),
                               (A, "in", lat(), "in", 10)],
                      **fixf(rnd, "8", "VENUE", "ALGO", mseq["BA"],
                             cl_ord_id=cl, symbol=sym, side=side,
                             ord_status="2"))
            continue
        if i % 13 == 5:	# acked 1.5 s later: beyond the window
            g.tick(1500000000)
        mseq["BA"] += 1
        (sb, bb), (sa, ba) = sync_pair()
        g.tick(rnd.randint(20000, 400000))
        g.message(tcp_ba, [(B, "out", 0, sb, bb), (A, "in", lat(), sa, ba)],
                  **fixf(rnd, "8", "VENUE", "ALGO", mseq["BA"], cl_ord_id=cl,
                         symbol=sym, side=side, ord_status="0"))
        if i % 5 == 0:	# a fill too
            mseq["BA"] += 1
            g.message(tcp_ba, [(B, "out", 0, sb, bb),
                               (A, "in", lat(), sa, ba)],
                      **fixf(rnd, "8", "VENUE", "ALGO", mseq["BA"],
                             cl_ord_id=cl, symbol=sym, side=side,
                             ord_status="2"))

    # Market data over UDP from md to algo and venue; md's capture does not
    # say direction (unknown: takes the sender's role), venue's neither on
    # some (two unknowns: no sample between them). md has no journal (sync
    # none, bound -1): md's hops have no bound.
    for i in range(400):
        dv = "unknown" if i % 3 == 0 else "in"
        g.message(udp_cb, [(C, "unknown", 0, "none", -1),
                           (A, "in", lat(), "in", 30),
                           (B, dv, lat(), "in", 30)],
                  **fixf(rnd, "X", "MD", "ALL", 1000 + i, symbol="EURUSD"))

    # IPv6 session venue -> algo, in which algo's direction is unknown.
    for i in range(120):
        g.message(v6, [(B, "out", 0, "in", 20), (A, "unknown", lat(), "in", 25)],
                  **fixf(rnd, "0", "V6V", "V6A", 1 + i))

    # A duplicate observation: the same message captured twice at venue
    # (a second interface), the copy later: the earliest counts.
    mseq["AB"] += 1
    g.message(tcp_ab, [(A, "out", 0, "in", 10), (B, "in", 15000, "in", 10),
                       (B, "in", 15500, "in", 10, "eth1")],
              **fixf(rnd, "0", "ALGO", "VENUE", mseq["AB"]))
    # ... and one where the copy at a second interface came first by the
    # capture's order but later in time (rows out of time order).
    mseq["AB"] += 1
    seq, t = g.message(tcp_ab, [(A, "out", 0, "in", 10),
                                (B, "in", 17000, "in", 10, "eth1")],
                       **fixf(rnd, "0", "ALGO", "VENUE", mseq["AB"]))
    g.recs[-1]["_i"] = -1
    r = dict(g.recs[-1])
    r.update(ts=t + 16000, iface="eth0", _i=len(g.recs))
    g.recs.insert(len(g.recs) - 1, r)
    # A host that sees one message both arriving and leaving on the same
    # flow (it forwards it, no NAT): one observation per host, the first.
    mseq["AB"] += 1
    g.message(tcp_ab, [(A, "out", 0, "in", 10), (GW, "in", 5000, "in", 10),
                       (GW, "out", 9000, "in", 10), (B, "in", 20000, "in", 10)],
              **fixf(rnd, "0", "ALGO", "VENUE", mseq["AB"]))
    # The same message twice at venue with the same stamp, once without
    # a sync state (as an export run again with a journal would have it
    # until the parts merge; another interface here, so that the two rows
    # do not merge): the one with a sync state counts.
    mseq["AB"] += 1
    g.message(tcp_ab, [(A, "out", 0, "in", 10), (B, "in", 14000, "none", -1),
                       (B, "in", 14000, "in", 33, "eth1")],
              **fixf(rnd, "0", "ALGO", "VENUE", mseq["AB"]))
    # ... and one no other host saw: still one observation, no sample.
    g.message((6, "198.18.0.1", 40004, "198.18.0.2", 9004),
              [(GW, "in", 0, "in", 10), (GW, "out", 7000, "in", 10)],
              **fixf(rnd, "0", "GWA", "GWB", 1))
    # A pair beyond the window: arriving 1.2 s after it left (no sample);
    # and one just inside it (exactly 1 s: a sample).
    mseq["AB"] += 1
    g.message(tcp_ab, [(A, "out", 0, "in", 10), (B, "in", 1200000000, "in", 10)],
              **fixf(rnd, "0", "ALGO", "VENUE", mseq["AB"]))
    # The 1 s one leaves half a second before a minute starts and arrives
    # in the next: a minute is the sender's.
    g.t = (g.t // (60 * NS) + 1) * 60 * NS - NS // 2 - 1
    mseq["AB"] += 1
    g.message(tcp_ab, [(A, "out", 0, "in", 10), (B, "in", NS, "in", 10)],
              **fixf(rnd, "0", "ALGO", "VENUE", mseq["AB"]))
    # One a microsecond either side of a minute's start.
    g.t = (g.t // (60 * NS) + 1) * 60 * NS - 1000 - 1
    mseq["AB"] += 1
    g.message(tcp_ab, [(A, "out", 0, "in", 10), (B, "in", 2000, "in", 10)],
              **fixf(rnd, "0", "ALGO", "VENUE", mseq["AB"]))
    # A host whose journal says neither in nor out of sync at the time
    # (sync none) though it gives a bound: its samples have no bound.
    for i in range(5):
        g.message((6, "198.18.0.1", 40005, "198.18.0.8", 9005),
                  [(A, "out", 0, "in", 10), ("aux", "in", 9000 + i, "none", 40)],
                  **fixf(rnd, "0", "ALGO", "AUX", 1 + i))
    # Two unknowns on a flow only they saw: no sample.
    g.message((17, "198.18.0.9", 6000, "198.18.0.10", 6000),
              [(C, "unknown", 0, "none", -1), (E, "unknown", 9000, "none", -1)],
              **fixf(rnd, "0", "Q", "R", 1))
    # The same TCP sequence number reused on a flow an hour later (a
    # 4 GB wrap): a second message, not a duplicate.
    t0 = g.t
    g.t += 3600 * NS
    f = tcp_ab
    g.tcp_seq[f] = g.recs[0]["seq"]
    mseq["AB"] += 1
    g.message(f, [(A, "out", 0, "in", 10), (B, "in", 21000, "in", 10)],
              **fixf(rnd, "0", "ALGO", "VENUE", mseq["AB"]))
    g.t = t0 + NS

    # A NAT'd session algo -> gw -> exch: algo's capture has 198.18.0.1 ->
    # 198.18.0.5 (the gateway's address), exch's has 198.18.0.6 -> .7 (the
    # gateway's outside address): flows differ, session keys match. gw
    # captures nothing. Replies go back the same way.
    nat_in = (6, "198.18.0.1", 40100, "198.18.0.5", 9100)
    nat_out = (6, "198.18.0.6", 51000, "198.18.0.7", 9100)
    nat_back_in = (6, "198.18.0.7", 9100, "198.18.0.6", 51000)
    nat_back_out = (6, "198.18.0.5", 9100, "198.18.0.1", 40100)
    for i in range(1, 151):
        t = g.tick()
        fx = fixf(rnd, "D", "ALGO2", "EXCH", i, cl_ord_id="N%d" % i,
                  symbol="USDJPY", side="1")
        (sa, ba), (se, be) = sync_pair()
        d = lat() + 40000
        for (h, fl, dd, sy, bo) in ((A, nat_in, 0, sa, ba),
                                    (E, nat_out, d, se, be)):
            s = rnd.randint(0, 2**32 - 1)
            g.rec(host=h, dir="out" if h == A else "in", proto=6,
                  src_addr=fl[1], src_port=fl[2], dst_addr=fl[3],
                  dst_port=fl[4], seq=s, ts=t + dd, sync=sy, bound_ns=bo,
                  **fx)
        if i % 10 == 0:
            continue
        t = g.tick()
        fx = fixf(rnd, "8", "EXCH", "ALGO2", i, cl_ord_id="N%d" % i,
                  symbol="USDJPY", side="1", ord_status="0")
        d = lat() + 40000
        for (h, fl, dd, dr) in ((E, nat_back_in, 0, "out"),
                                (A, nat_back_out, d, "in")):
            g.rec(host=h, dir=dr, proto=6, src_addr=fl[1], src_port=fl[2],
                  dst_addr=fl[3], dst_port=fl[4],
                  seq=rnd.randint(0, 2**32 - 1), ts=t + dd, sync="in",
                  bound_ns=20, **fx)
    # Session keys that match on flows both hosts captured: matched (or
    # not) by flow, never by session (a second session between algo and
    # venue reusing CompIDs and MsgSeqNums: its Logon 34=1).
    second = (6, "198.18.0.1", 40003, "198.18.0.2", 9001)
    g.message(second, [(A, "out", 0, "in", 10), (B, "in", 30000, "in", 10)],
              **fixf(rnd, "A", "ALGO", "VENUE", 1))
    g.message(tcp_ab, [(A, "out", 0, "in", 10)],
              **fixf(rnd, "A", "ALGO", "VENUE", 1))
    # A NAT'd message too late for the window (1.5 s): no session pair.
    t = g.tick()
    fx = fixf(rnd, "D", "ALGO2", "EXCH", 9999, cl_ord_id="LATE")
    for (h, fl, dd, dr) in ((A, nat_in, 0, "out"),
                            (E, nat_out, 1500000000, "in")):
        g.rec(host=h, dir=dr, proto=6, src_addr=fl[1], src_port=fl[2],
              dst_addr=fl[3], dst_port=fl[4], seq=rnd.randint(0, 2**32 - 1),
              ts=t + dd, sync="in", bound_ns=20, **fx)
    # A message missing a session key (no 34): never paired by session.
    t = g.tick()
    fx = fixf(rnd, "D", "ALGO2", "EXCH", 0, cl_ord_id="NOSEQ")
    for (h, fl, dd, dr) in ((A, nat_in, 0, "out"), (E, nat_out, 50000, "in")):
        g.rec(host=h, dir=dr, proto=6, src_addr=fl[1], src_port=fl[2],
              dst_addr=fl[3], dst_port=fl[4], seq=rnd.randint(0, 2**32 - 1),
              ts=t + dd, sync="in", bound_ns=20, **fx)

    # Across midnight: a second day (partition) and minute.
    g.t = DAY0 + 86400 * NS - 3 * NS
    for i in range(50):
        mseq["AB"] += 1
        g.message(tcp_ab, [(A, "out", 0, "in", 12), (B, "in", lat(), "in", 12)],
                  **fixf(rnd, "0", "ALGO", "VENUE", mseq["AB"]))
        g.tick(100000000)

    recs = g.recs
    for r in recs:
        for k in ("msg_type", "sender_comp", "target_comp", "cl_ord_id",
                  "symbol", "side", "ord_status"):
            r.setdefault(k, "")
        r.setdefault("msg_seq", 0)
    samples = list(samples_of(by_flow(recs)))
    truth = {
        "hops": hop_rows(samples),
        "hops_per_minute": hop_rows(samples, per_minute=True),
        "hops_by_session": hop_rows(list(samples_of(by_session(recs)))),
        "order_to_ack": order_to_ack(recs),
    }
    # Host-computed transactions: whatever tapless export would write; the
    # SQL only summarises them.
    txns = []
    for k in range(4):
        kind = ("tick_to_trade", "fill_to_sell", "order_to_ack",
                "order_to_fill")[k]
        for h in (A, B):
            for i in range(rnd.randint(5, 40)):
                t = DAY0 + 3600 * NS + rnd.randint(0, 200) * NS
                txns.append({"host": h, "kind": kind, "ts": t,
                             "latency_ns": rnd.randint(1000, 900000)})
    tacc = {}
    for x in txns:
        tacc.setdefault((x["host"], x["kind"]), []).append(x["latency_ns"])
    truth["transactions"] = [dict(host=h, kind=k, **summary(v))
                             for (h, k), v in sorted(tacc.items())]
    macc = {}
    for x in txns:
        macc.setdefault((x["host"], x["kind"], x["ts"] // (60 * NS) * 60),
                        []).append(x["latency_ns"])
    truth["transactions_per_minute"] = [
        dict(host=h, kind=k, minute=m, **summary(v))
        for (h, k, m), v in sorted(macc.items())]

    with open(dirname + "/records.tsv", "w") as f:
        for r in recs:
            f.write(row(r) + "\n")
    with open(dirname + "/transactions.tsv", "w") as f:
        for x in txns:
            f.write("%s\t%s\t%s\t%d\t%d\thost\n" % (
                day_of(x["ts"]), x["host"], x["kind"], x["ts"],
                x["latency_ns"]))
    with open(dirname + "/truth.json", "w") as f:
        json.dump(truth, f, indent=1, sort_keys=True)


# ---- the bench's bulk rows ----

def make_bulk(n):
    """n rows, n/2 messages on two hosts, written as fast as Python goes:
    the row text is built from pieces, not per field."""
    rnd = random.Random(10)
    out = sys.stdout
    algo, venue = "algo-ny4-01", "venue-ny4-gw"
    sessions = []
    for s in range(8):
        a = ("198.18.1.1", 40000 + s, "198.18.1.2", 9000 + s)
        sessions.append({
            "ab": "6\t%s\t%d\t%s\t%d" % a,
            "ba": "6\t%s\t%d\t%s\t%d" % (a[2], a[3], a[0], a[1]),
            "seq_ab": rnd.randint(0, 2**32 - 1),
            "seq_ba": rnd.randint(0, 2**32 - 1),
            "ms_ab": 0, "ms_ba": 0,
            "algo": "ALGO%02d" % s, "venue": "VENUEX",
        })
    md = "17\t198.18.1.2\t5000\t239.1.1.1\t5000"
    syms = ["EURUSD", "GBPUSD", "USDJPY", "AUDUSD", "USDCHF", "EURJPY",
            "ESZ6", "NQZ6", "AAPL", "MSFT"]
    t = DAY0 + 13 * 3600 * NS
    day = day_of(t)
    half = n // 2
    buf = []
    off_a = off_b = 0
    oid = 0
    pending = []
    for i in range(half):
        t += rnd.randint(2000, 38000)	# ~50 k messages/s
        if t // (86400 * NS) != (t - 38000) // (86400 * NS):
            day = day_of(t)
        x = rnd.random()
        sym = syms[i % len(syms)]
        if x < 0.3:	# market data venue -> algo, UDP
            body = "%s\t%d\tMDVENUE\tALL\t%d\tX\t\t%s\t\t" % (
                md, rnd.getrandbits(32), i + 1, sym)
            tx, rx = (venue, "eth2"), (algo, "eth1")
        elif x < 0.65 or not pending:	# an order algo -> venue
            s = sessions[i % 8]
            s["ms_ab"] += 1
            oid += 1
            cl = "O%010d" % oid
            body = "%s\t%d\t%s\t%s\t%d\tD\t%s\t%s\t%s\t" % (
                s["ab"], s["seq_ab"], s["algo"], s["venue"], s["ms_ab"],
                cl, sym, "1" if oid & 1 else "2")
            s["seq_ab"] = (s["seq_ab"] + 180 + (oid % 40)) % 2**32
            pending.append((s, cl, sym))
            tx, rx = (algo, "eth1"), (venue, "eth2")
        else:	# its execution report venue -> algo
            s, cl, sym2 = pending.pop(0)
            s["ms_ba"] += 1
            body = "%s\t%d\t%s\t%s\t%d\t8\t%s\t%s\t1\t%s" % (
                s["ba"], s["seq_ba"], s["venue"], s["algo"], s["ms_ba"],
                cl, sym2, "0" if rnd.random() < 0.7 else "2")
            s["seq_ba"] = (s["seq_ba"] + 240 + (oid % 50)) % 2**32
            tx, rx = (venue, "eth2"), (algo, "eth1")
        lat = 18000 + int(rnd.expovariate(1 / 6000.0))
        sync_tx = "out" if rnd.random() < 0.001 else "in"
        b = rnd.randint(8, 60)
        for (host, iface), d, ts in ((tx, "out", t), (rx, "in", t + lat)):
            if host == algo:
                off_a += 180
                off = off_a
            else:
                off_b += 180
                off = off_b
            buf.append("%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\thw\tcapture\t%s\t%d\t"
                       "/var/lib/tapless/%s/cap-%s.pcapng\t%d\n" % (
                           day, host, iface, d, body, ts, ts + 900, 240,
                           sync_tx if d == "out" else "in", b, host,
                           day, off))
        if len(buf) >= 20000:
            out.write("".join(buf))
            buf = []
    out.write("".join(buf))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "test":
        make_test(sys.argv[2])
    elif len(sys.argv) == 3 and sys.argv[1] == "bulk":
        make_bulk(int(sys.argv[2]))
    else:
        sys.stderr.write(__doc__)
        sys.exit(2)


if __name__ == "__main__":
    main()
