-- hops_per_minute.sql — hops.sql per minute: one-way latency per hop
-- (from_host -> to_host) and per minute of the sender's stamp
-- (toStartOfMinute of tx.ts, UTC), for a latency-over-time plot.
-- ClickHouse 18.16 and later.
--
--   clickhouse-client --format=TSVWithNames < scripts/clickhouse/hops_per_minute.sql
--
-- Columns: from_host, to_host, minute (DateTime, UTC), then as hops.sql:
-- messages, out_of_sync, holdover, count, min, mean, p50, p90, p99, p999, max, sd,
-- bound_max_ns, bound_mean_ns. A minute's figures are of the samples sent
-- in it. The matching, its rules, the nearest-rank percentiles and where
-- they differ from tapless correlate are hops.sql's: see its comments,
-- which this file does not repeat. Only the last grouping differs, so keep
-- the two in step.
--
-- Time range: uncomment and edit the WHERE marked TIME RANGE (UTC).
WITH
	-- Host names by number (1-based, sorted). Two levels, so that it is
	-- one row also with distributed_group_by_no_merge (one per shard).
	(SELECT arraySort(groupUniqArrayArray(hs)) FROM
		(SELECT groupUniqArray(host) AS hs FROM tapless.records)) AS hosts
SELECT
	hosts[fh] AS from_host,
	hosts[th] AS to_host,
	minute,
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
		fh, th, minute,
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
			toStartOfMinute(toDateTime(intDiv(if(g = 0, fts, gts),
							  1000000000), 'UTC')) AS minute,
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
				if(r1 = 2, t[1], t[2]) AS fts,
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
					AS glats,
				arrayMap(q -> t[intDiv(q, g) + 1], pairs) AS gtss
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
		LEFT ARRAY JOIN gxs AS gx, gys AS gy, glats AS glat, gtss AS gts
		WHERE (g = 0 AND fok) OR (g != 0 AND gx != 0)
	)
	GROUP BY fh, th, minute
)
ORDER BY from_host, to_host, minute
