-- hops.sql — one-way latency per hop (from_host -> to_host) from
-- tapless.records, as tapless correlate --json gives it per hop (flow
-- "all", no rate bucket). ClickHouse 18.16 and later.
--
--   clickhouse-client --format=PrettyCompact < scripts/clickhouse/hops.sql
--
-- Columns: from_host, to_host; messages (every matched sample); out_of_sync
-- (samples where either end's sync was 'out', left out of the figures);
-- count, min, mean, p50, p90, p99, p999, max, sd of the in-sync samples
-- (ns; NULL when count is 0); bound_max_ns and bound_mean_ns, the clock
-- error bound of the in-sync samples (NULL unless every one had a bound).
--
-- The rules are tapless correlate's (src/corr/corr_match.c):
-- - A message is the same at every host by its flow (proto, addresses,
--   ports, in the direction it travelled) and seq (TCP: sequence number of
--   its first byte; UDP: hash of its bytes).
-- - One observation per host: a second one of the same message at the same
--   host (another interface, a copy) at most 1 s after an earlier one is a
--   duplicate, and the earliest counts. This also makes a row inserted
--   twice count once, so the query needs no FINAL (which on 18.16 reads
--   through one single-threaded merge; see bench/clickhouse-sql.sh).
-- - A sample: two observations at different hosts, at most 1 s apart
--   (the matching window); the one that left (dir 'out') is the sender. A
--   capture that does not know the direction ('unknown') takes the role
--   opposite to the other end's; two unknowns, or two arrivals (multicast
--   receivers), make no sample. Latency = rx.ts - tx.ts (first bytes).
-- - Bound: tx.bound_ns + rx.bound_ns when both ends are 'in' sync with a
--   bound (>= 0); max and mean only when every in-sync sample had one.
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
-- - The correlator tracks at most 4 observations of a message; not here.
-- - Messages are grouped by a 64-bit hash of (flow, seq) (grouping by one
--   UInt64 is 3x faster on 18.16 than by the columns): two different
--   messages with the same hash would also need to be within 1 s of each
--   other to make a false sample.
--
-- Speed: the grouping by message is most of the time. Messages seen at
-- exactly two observations (the usual case) take a short path; the others
-- (duplicates, multicast to several hosts, reused sequence numbers) go
-- through array functions that cost a few microseconds per message.
--
-- Time range: uncomment and edit the WHERE marked TIME RANGE (UTC). day
-- prunes whole partitions; ts (ns) is the exact range. Samples whose two
-- ends fall either side of the range's edges are lost.
WITH
	-- Host names back from their hashes. Two levels, so that it is one
	-- row also with distributed_group_by_no_merge (one row per shard).
	(SELECT groupUniqArrayArray(hs) FROM
		(SELECT groupUniqArray(host) AS hs FROM tapless.records)) AS hosts,
	arrayMap(x -> cityHash64(x), hosts) AS hashes
SELECT
	hosts[indexOf(hashes, fh)] AS from_host,
	hosts[indexOf(hashes, th)] AS to_host,
	messages,
	out_of_sync,
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
		-- One row per sample: code = tx index * 65536 + rx index into the
		-- message's arrays.
		SELECT
			intDiv(code, 65536) AS x,
			code % 65536 AS y,
			hh[x] AS fh,
			hh[y] AS th,
			t[y] - t[x] AS lat,
			p[x] % 4 = 2 OR p[y] % 4 = 2 AS oos,
			if(p[x] % 4 = 1 AND p[y] % 4 = 1 AND b[x] >= 0 AND b[y] >= 0,
			   b[x] + b[y], -1) AS bound
		FROM
		(
			-- Per message, its samples. p = dir * 4 + sync (dir: 0
			-- unknown, 1 in, 2 out; sync: 0 none, 1 in, 2 out).
			SELECT
				t, hh, p, b,
				length(t) AS k,
				-- Two observations: compared directly.
				intDiv(p[1], 4) AS d1,
				intDiv(p[2], 4) AS d2,
				if(d1 = 0, 3 - d2, d1) AS r1,
				if(d2 = 0, 3 - d1, d2) AS r2,
				multiIf(hh[1] = hh[2] OR abs(t[1] - t[2]) > 1000000000,
					toUInt64(0),
					r1 = 2 AND r2 = 1, toUInt64(1 * 65536 + 2),
					r1 = 1 AND r2 = 2, toUInt64(2 * 65536 + 1),
					toUInt64(0)) AS code2,
				-- More: the general case, over arrays left empty
				-- when k = 2 so that it costs nothing there. (On
				-- 18.16 a lambda sees only the columns passed to
				-- its function, hence the long argument lists.)
				if(k = 2, emptyArrayInt64(), t) AS gt,
				if(k = 2, emptyArrayUInt64(), hh) AS gh,
				if(k = 2, emptyArrayUInt8(), p) AS gp,
				if(k = 2, emptyArrayInt64(), b) AS gb,
				arrayEnumerate(gt) AS gi,
				-- Kept unless the same host saw it earlier, at most
				-- 1 s before (ties broken by dir, sync, bound, then
				-- position, so exact copies keep one).
				arrayMap((i, hi, ti, pi, bi) -> NOT arrayExists(
					(j, hj, tj, pj, bj) -> hj = hi AND tj <= ti
						AND ti - tj <= 1000000000
						AND (tj, pj, bj, j) < (ti, pi, bi, i),
					gi, gh, gt, gp, gb), gi, gh, gt, gp, gb) AS keep,
				-- For each observation as sender, its receivers.
				arrayMap((i, hi, ti, pi, ki) -> arrayFilter(
					(j, hj, tj, pj, kj) -> ki AND kj AND hj != hi
						AND abs(tj - ti) <= 1000000000
						AND if(intDiv(pi, 4) = 0, 3 - intDiv(pj, 4),
						       intDiv(pi, 4)) = 2
						AND if(intDiv(pj, 4) = 0, 3 - intDiv(pi, 4),
						       intDiv(pj, 4)) = 1,
					gi, gh, gt, gp, keep), gi, gh, gt, gp, keep) AS rxs,
				arrayMap((i, js) -> arrayMap(j -> toUInt64(i * 65536 + j), js),
					 gi, rxs) AS codes
			FROM
			(
				SELECT
					groupArray(ts) AS t,
					groupArray(cityHash64(host)) AS hh,
					groupArray(CAST(dir AS UInt8) * 4 +
						   CAST(sync AS UInt8)) AS p,
					groupArray(bound_ns) AS b
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
		ARRAY JOIN if(k = 2, [code2],
			      arrayReduce('groupArrayArray', codes)) AS code
		WHERE code != 0
	)
	GROUP BY fh, th
)
ORDER BY from_host, to_host
