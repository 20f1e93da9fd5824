-- hops_per_minute.sql — hops.sql per minute: one-way latency per hop
-- (from_host -> to_host) and per minute of the sender's stamp
-- (toStartOfMinute of tx.ts, UTC), for a latency-over-time plot.
-- ClickHouse 18.16 and later.
--
--   clickhouse-client --format=TSVWithNames < scripts/clickhouse/hops_per_minute.sql
--
-- Columns: from_host, to_host, minute (DateTime, UTC), then as hops.sql:
-- messages, out_of_sync, count, min, mean, p50, p90, p99, p999, max, sd,
-- bound_max_ns, bound_mean_ns. A minute's figures are of the samples sent
-- in it. The matching, its rules, the nearest-rank percentiles and where
-- they differ from tapless correlate are hops.sql's: see its comments,
-- which this file does not repeat. Only the last grouping differs, so keep
-- the two in step.
--
-- Time range: uncomment and edit the WHERE marked TIME RANGE (UTC).
WITH
	-- Host names back from their hashes. Two levels, so that it is one
	-- row also with distributed_group_by_no_merge (one row per shard).
	(SELECT groupUniqArrayArray(hs) FROM
		(SELECT groupUniqArray(host) AS hs FROM tapless.records)) AS hosts,
	arrayMap(x -> cityHash64(x), hosts) AS hashes
SELECT
	hosts[indexOf(hashes, fh)] AS from_host,
	hosts[indexOf(hashes, th)] AS to_host,
	minute,
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
		fh, th, minute,
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
			toStartOfMinute(toDateTime(intDiv(t[x], 1000000000), 'UTC'))
				AS minute,
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
	GROUP BY fh, th, minute
)
ORDER BY from_host, to_host, minute
