-- transactions.sql — transactions at one host (tick_to_trade, fill_to_sell,
-- order_to_ack, order_to_fill): three queries, one after the other.
-- ClickHouse 18.16 and later.
--
--   clickhouse-client --multiquery --format=PrettyCompact < scripts/clickhouse/transactions.sql
--
-- 1. Per host and kind, from tapless.transactions: what tapless export
--    computed on the host's capture with tapless correlate's own code
--    (computed_by = 'host'). The SQL only summarises them: tick_to_trade
--    and fill_to_sell need "the latest trigger for this symbol before the
--    order" over every bid entry of a market data message, which neither
--    the records (one symbol each) nor 18.16 (no ASOF JOIN, no window
--    functions) can give.
-- 2. The same per minute of the order's stamp (toStartOfMinute, UTC).
-- 3. A cross-check computed in SQL from tapless.records (computed_by =
--    'sql'): order_to_ack per host, the first 35=D sent (dir 'out') to the
--    first 35=8 with 39=0 received (dir 'in') of the same ClOrdID at the
--    same host, when both are at most 1 s apart. It should agree with the
--    host's order_to_ack of query 1; the correlator's table of orders
--    differs only where a ClOrdID is reused or an order table overflows.
--
-- Columns: host, kind, [minute,] computed_by, count, min, mean, p50, p90,
-- p99, p999, max, sd (ns). Percentiles are nearest-rank, as tapless
-- correlate's (see hops.sql on the quantilesExact levels used).
--
-- FINAL: a transaction inserted twice collapses into one (the table's key
-- is the whole row); FINAL does it at read time for parts not yet merged.
-- The cross-check needs none: it takes the first of each kind anyway.
--
-- Time range: uncomment and edit the WHEREs marked TIME RANGE (UTC).

SELECT
	host, kind, computed_by,
	count, min, mean,
	q[1] AS p50, q[2] AS p90, q[3] AS p99, q[4] AS p999,
	max, sd
FROM
(
	SELECT
		host,
		kind,
		computed_by,
		count() AS count,
		min(latency_ns) AS min,
		avg(latency_ns) AS mean,
		quantilesExact(0.499999999999999, 0.899999999999999,
			       0.989999999999999, 0.998999999999999)(latency_ns) AS q,
		max(latency_ns) AS max,
		if(count() > 1, stddevSamp(latency_ns), 0) AS sd
	FROM tapless.transactions FINAL
	-- TIME RANGE:
	-- WHERE day BETWEEN toDate('2026-11-25') AND toDate('2026-11-25')
	--   AND ts >= toUnixTimestamp(toDateTime('2026-11-25 13:00:00', 'UTC')) * 1000000000
	--   AND ts <  toUnixTimestamp(toDateTime('2026-11-25 14:00:00', 'UTC')) * 1000000000
	GROUP BY host, kind, computed_by
)
ORDER BY host, kind;

SELECT
	host, kind, minute, computed_by,
	count, min, mean,
	q[1] AS p50, q[2] AS p90, q[3] AS p99, q[4] AS p999,
	max, sd
FROM
(
	SELECT
		host,
		kind,
		toStartOfMinute(toDateTime(intDiv(ts, 1000000000), 'UTC')) AS minute,
		computed_by,
		count() AS count,
		min(latency_ns) AS min,
		avg(latency_ns) AS mean,
		quantilesExact(0.499999999999999, 0.899999999999999,
			       0.989999999999999, 0.998999999999999)(latency_ns) AS q,
		max(latency_ns) AS max,
		if(count() > 1, stddevSamp(latency_ns), 0) AS sd
	FROM tapless.transactions FINAL
	-- TIME RANGE:
	-- WHERE day BETWEEN toDate('2026-11-25') AND toDate('2026-11-25')
	--   AND ts >= toUnixTimestamp(toDateTime('2026-11-25 13:00:00', 'UTC')) * 1000000000
	--   AND ts <  toUnixTimestamp(toDateTime('2026-11-25 14:00:00', 'UTC')) * 1000000000
	GROUP BY host, kind, minute, computed_by
)
ORDER BY host, kind, minute;

-- Cross-check: order_to_ack from the records.
SELECT
	host, kind, computed_by,
	count, min, mean,
	q[1] AS p50, q[2] AS p90, q[3] AS p99, q[4] AS p999,
	max, sd
FROM
(
	SELECT
		host,
		'order_to_ack' AS kind,
		'sql' AS computed_by,
		count() AS count,
		min(lat) AS min,
		avg(lat) AS mean,
		quantilesExact(0.499999999999999, 0.899999999999999,
			       0.989999999999999, 0.998999999999999)(lat) AS q,
		max(lat) AS max,
		if(count() > 1, stddevSamp(lat), 0) AS sd
	FROM
	(
		SELECT
			host,
			ack - tx AS lat
		FROM
		(
			SELECT
				host,
				minIf(ts, msg_type = 'D') AS tx,
				minIf(ts, msg_type = '8') AS ack,
				countIf(msg_type = 'D') AS orders,
				countIf(msg_type = '8') AS acks
			FROM tapless.records
			WHERE cl_ord_id != ''
			  AND ((msg_type = 'D' AND dir = 'out') OR
			       (msg_type = '8' AND dir = 'in' AND ord_status = '0'))
			  -- TIME RANGE:
			  -- AND day BETWEEN toDate('2026-11-25') AND toDate('2026-11-25')
			  -- AND ts >= toUnixTimestamp(toDateTime('2026-11-25 13:00:00', 'UTC')) * 1000000000
			  -- AND ts <  toUnixTimestamp(toDateTime('2026-11-25 14:00:00', 'UTC')) * 1000000000
			GROUP BY host, cl_ord_id
			HAVING orders > 0 AND acks > 0
			   AND abs(ack - tx) <= 1000000000
		)
	)
	GROUP BY host
)
ORDER BY host;
