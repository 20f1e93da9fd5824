-- hops.sql — one-way latency per hop (from_host -> to_host) from
-- tapless.records, as tapless correlate --json gives it per hop (flow
-- "all", no rate bucket). ClickHouse 18.16 and later.
--
--   clickhouse-client --format=PrettyCompact < scripts/clickhouse/hops.sql
--
-- Columns: from_host, to_host; messages (every matched sample); out_of_sync
-- (samples where either end's sync was 'out', left out of the figures);
-- holdover (of the samples in the figures, those with an end in
-- 'holdover' and the other 'in' or 'holdover': bounded, by a bound grown
-- since the last fresh measurement); count, min, mean, p50, p90, p99,
-- p999, max, sd of the samples not out of sync (ns; NULL when count is
-- 0); bound_max_ns and bound_mean_ns, the clock error bound of those
-- samples (NULL unless every one had a bound).
--
-- The rules are tapless correlate's (src/corr/corr_match.c):
-- - A message is the same at every host by its flow (proto, addresses,
--   ports, in the direction it travelled) and seq (TCP: sequence number of
--   its first byte; UDP: hash of its bytes).
-- - One observation per host: a second one of the same message at the same
--   host (another interface, a copy) at most 1 s after an earlier one is a
--   duplicate, and the earliest counts. This also makes a row inserted
--   twice count once, so the query needs no FINAL (which on 18.16 reads
--   through one single-threaded merge; see bench/clickhouse-sql.sh). Two
--   rows with the same key that differ elsewhere (an export run again, now
--   with a sync journal) are both read until their parts merge: the one
--   with a sync state counts. Add FINAL after "FROM tapless.records" below
--   to read what the merge will keep instead (slower).
-- - A sample: two observations at different hosts, at most 1 s apart
--   (the matching window); the one that left (dir 'out') is the sender. A
--   capture that does not know the direction ('unknown') takes the role
--   opposite to the other end's; two unknowns, or two arrivals (multicast
--   receivers), make no sample. Latency = rx.ts - tx.ts (first bytes).
-- - Bound: tx.bound_ns + rx.bound_ns when both ends are 'in' sync or in
--   'holdover' with a bound (>= 0); max and mean only when every sample
--   not out of sync had one.
-- - Percentiles are nearest-rank (the smallest sample with at least p% of
--   the samples at or below it), as src/base/summary.c. quantilesExact at
--   level L returns the sample at 0-based index floor(L * n); nearest rank
--   is 1-based ceil(p * n), which is index floor((p - e) * n) for e small
--   enough (1e-15: exact for n up to 1e11). Hence levels 0.499999999999999
--   and so on. (tapless correlate keeps a histogram: above 16 us its
--   percentiles may be up to 1/1024 below the exact ones given here; its
--   JSON says by how much in histogram_error_ns.)
--
-- Where it differs from the correlator (documented, rare):
-- - The correlator pairs observations within 1 s of the first one seen of a
--   message; here within 1 s of each other (same for two hosts).
-- - The correlator tracks at most 4 observations of a message, and at most
--   --max-pending (262144) messages waiting within the window (it warns
--   when more left early); no limit here.
-- - The correlator forgets a message once every host has seen it: should
--   each host see it again (a UDP datagram captured on two interfaces at
--   every host), the second copies make a second sample. Here they are
--   duplicates.
-- - Messages are grouped by a 64-bit hash of (flow, seq) (grouping by one
--   UInt64 is 3x faster on 18.16 than by the columns): two different
--   messages with the same hash would also need to be within 1 s of each
--   other to make a false sample.
--
-- Speed (bench/clickhouse-sql.sh): the grouping by message is most of the
-- time, and all that follows it runs in one thread on 18.16, so the work
-- per message after it is kept small. Messages seen exactly twice (the
-- usual case) take a short path; the others (duplicates, multicast to
-- several hosts, a sequence number reused) go through array functions. An
-- observation travels packed in one UInt64 (host number, dir, sync,
-- bound), beside its stamp: each array grouped adds about half of what
-- the grouping itself costs. A bound above 2^44 ns (4.9 hours) counts as
-- that.
--
-- Time range: uncomment and edit the WHERE marked TIME RANGE (UTC). day
-- prunes whole partitions; ts (ns) is the exact range. Samples whose two
-- ends fall either side of the range's edges are lost.
WITH
	-- Host names by number (1-based, sorted). Two levels, so that it is
	-- one row also with distributed_group_by_no_merge (one per shard).
	(SELECT arraySort(groupUniqArrayArray(hs)) FROM
		(SELECT groupUniqArray(host) AS hs FROM tapless.records)) AS hosts
SELECT
	hosts[fh] AS from_host,
	hosts[th] AS to_host,
	messages,
	out_of_sync,
	holdover,
	n AS count,
	if(n = 0, NULL, lat_min) AS min,
	if(n = 0, NULL, lat_mean) AS mean,
	if(n = 0, NULL, q[1]) AS p50,
	if(n = 0, NULL, q[2]) AS p90,
	if(n = 0, NULL, q[3]) AS p99,
	if(n = 0, NULL, q[4]) AS p999,
	if(n = 0, NULL, lat_max) AS max,
	if(n = 0, NULL, if(n > 1, lat_sd, 0)) AS sd,
	if(n = 0 OR no_bound > 0, NULL, b_max) AS bound_max_ns,
	if(n = 0 OR no_bound > 0, NULL, b_mean) AS bound_mean_ns
FROM
(
	-- Per hop, from one row per sample.
	SELECT
		fh, th,
		count() AS messages,
		countIf(oos) AS out_of_sync,
		countIf(hold) AS holdover,
		countIf(NOT oos) AS n,
		minIf(lat, NOT oos) AS lat_min,
		avgIf(lat, NOT oos) AS lat_mean,
		quantilesExactIf(0.499999999999999, 0.899999999999999,
				 0.989999999999999, 0.998999999999999)(lat, NOT oos) AS q,
		maxIf(lat, NOT oos) AS lat_max,
		stddevSampIf(lat, NOT oos) AS lat_sd,
		countIf(NOT oos AND bound < 0) AS no_bound,
		maxIf(bound, NOT oos) AS b_max,
		avgIf(bound, NOT oos) AS b_mean
	FROM
	(
		-- One row per sample: the sender's and the receiver's packed
		-- observations, and the latency.
		SELECT
			if(g = 0, fx, gx) AS xp,
			if(g = 0, fy, gy) AS yp,
			if(g = 0, flat, glat) AS lat,
			bitShiftRight(xp, 48) AS fh,
			bitShiftRight(yp, 48) AS th,
			bitShiftRight(xp, 44) % 4 AS xs,
			bitShiftRight(yp, 44) % 4 AS ys,
			xs = 2 OR ys = 2 AS oos,
			toInt64(xp % 17592186044416) - 1 AS xb,
			toInt64(yp % 17592186044416) - 1 AS yb,
			-- Bounded: both ends in sync or in holdover (the latter's
			-- bound grown since its last fresh measurement).
			xs IN (1, 3) AND ys IN (1, 3) AS bounded,
			bounded AND (xs = 3 OR ys = 3) AS hold,
			if(bounded AND xb >= 0 AND yb >= 0, xb + yb, -1) AS bound
		FROM
		(
			-- Per message, its samples. An observation p: host
			-- number << 48 | dir << 46 | sync << 44 | bound + 1 (dir: 0
			-- unknown, 1 in, 2 out; sync: 0 none, 1 in, 2 out, 3
			-- holdover; bound
			-- 0: unknown).
			SELECT
				length(t) AS k,
				-- Two observations: compared directly. A role
				-- 'unknown' takes the opposite of the other's (3 - d).
				p[1] AS p1,
				p[2] AS p2,
				bitShiftRight(p1, 46) % 4 AS d1,
				bitShiftRight(p2, 46) % 4 AS d2,
				if(d1 = 0, 3 - d2, d1) AS r1,
				if(d2 = 0, 3 - d1, d2) AS r2,
				k = 2 AND bitShiftRight(p1, 48) != bitShiftRight(p2, 48)
					AND abs(t[1] - t[2]) <= 1000000000
					AND ((r1 = 2 AND r2 = 1) OR (r1 = 1 AND r2 = 2)) AS fok,
				if(r1 = 2, p1, p2) AS fx,
				if(r1 = 2, p2, p1) AS fy,
				if(r1 = 2, t[2] - t[1], t[1] - t[2]) AS flat,
				-- More: every ordered pair (i, j) of the g
				-- observations as q = (i - 1) * g + (j - 1). g is 0
				-- when k = 2, so this costs little there. (On 18.16 a
				-- lambda sees a column only if something outside a
				-- lambda needs it too: hence length(t), length(p).)
				if(k = 2, 0, least(length(t), length(p))) AS g,
				-- Duplicates: observation i when the same host saw
				-- the message at j, earlier, at most 1 s before. Ties
				-- (the same stamp) go to the larger p: a known sync
				-- state over none (an export run again with a journal
				-- beats the one without, until their parts merge),
				-- then to the position, so exact copies keep one.
				arrayMap(q -> intDiv(q, g) + 1, arrayFilter(q ->
					bitShiftRight(p[q % g + 1], 48) =
						bitShiftRight(p[intDiv(q, g) + 1], 48)
					AND t[intDiv(q, g) + 1] - t[q % g + 1] <= 1000000000
					AND (t[q % g + 1], bitNot(p[q % g + 1]), q % g) <
					    (t[intDiv(q, g) + 1], bitNot(p[intDiv(q, g) + 1]),
					     intDiv(q, g)),
					range(g * g))) AS dups,
				-- Samples: i sent, j received, neither a duplicate,
				-- other hosts, at most 1 s apart.
				arrayFilter(q ->
					NOT has(dups, intDiv(q, g) + 1)
					AND NOT has(dups, q % g + 1)
					AND bitShiftRight(p[q % g + 1], 48) !=
						bitShiftRight(p[intDiv(q, g) + 1], 48)
					AND abs(t[q % g + 1] - t[intDiv(q, g) + 1]) <= 1000000000
					AND if(bitShiftRight(p[intDiv(q, g) + 1], 46) % 4 = 0,
					       3 - bitShiftRight(p[q % g + 1], 46) % 4,
					       bitShiftRight(p[intDiv(q, g) + 1], 46) % 4) = 2
					AND if(bitShiftRight(p[q % g + 1], 46) % 4 = 0,
					       3 - bitShiftRight(p[intDiv(q, g) + 1], 46) % 4,
					       bitShiftRight(p[q % g + 1], 46) % 4) = 1,
					range(g * g)) AS pairs,
				arrayMap(q -> p[intDiv(q, g) + 1], pairs) AS gxs,
				arrayMap(q -> p[q % g + 1], pairs) AS gys,
				arrayMap(q -> t[q % g + 1] - t[intDiv(q, g) + 1], pairs)
					AS glats
			FROM
			(
				-- Per message: its stamps and packed observations.
				WITH
					(SELECT arraySort(groupUniqArrayArray(hs)) FROM
						(SELECT groupUniqArray(host) AS hs
						 FROM tapless.records)) AS hosts
				SELECT
					groupArray(ts) AS t,
					groupArray(
						toUInt64(indexOf(hosts, host)) * 281474976710656
						+ CAST(dir AS UInt8) * 70368744177664
						+ CAST(sync AS UInt8) * 17592186044416
						+ toUInt64(if(bound_ns < 0, 0,
							      least(bound_ns + 1, 17592186044415))))
						AS p
				FROM tapless.records
				-- TIME RANGE:
				-- WHERE day BETWEEN toDate('2026-11-25') AND toDate('2026-11-25')
				--   AND ts >= toUnixTimestamp(toDateTime('2026-11-25 13:00:00', 'UTC')) * 1000000000
				--   AND ts <  toUnixTimestamp(toDateTime('2026-11-25 14:00:00', 'UTC')) * 1000000000
				GROUP BY cityHash64(proto, src_addr, src_port, dst_addr,
						    dst_port, seq)
				HAVING length(t) >= 2
			)
		)
		-- k = 2 rows keep one row (g = 0, no array: gx = 0).
		LEFT ARRAY JOIN gxs AS gx, gys AS gy, glats AS glat
		WHERE (g = 0 AND fok) OR (g != 0 AND gx != 0)
	)
	GROUP BY fh, th
)
ORDER BY from_host, to_host
