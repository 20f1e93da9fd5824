-- schema.sql — the tables tapless export writes into (database tapless).
-- Valid on ClickHouse 18.16 (Debian 12) and on current releases.
--
--   clickhouse-client --multiquery < scripts/clickhouse/schema.sql
--
-- The column order is the exporter's: it inserts RowBinary, which has no
-- column names, so a column added here goes at the end of its table and
-- into src/export/ in the same commit. A value added to an Enum8 goes
-- into its CREATE and into an ALTER ... MODIFY COLUMN after it, for
-- databases made before (every statement here may run again).

CREATE DATABASE IF NOT EXISTS tapless;

-- One row per FIX message seen per host and direction (a host that
-- captures one message on two interfaces has two rows: the queries keep
-- the earliest, as tapless correlate does).
--
-- ReplacingMergeTree with the whole natural key as ORDER BY: a row inserted
-- twice (a batch retried after the server had in fact committed it, or an
-- export rerun without its state file) is the same row and collapses into
-- one when parts merge. 18.16 has no insert deduplication outside
-- Replicated tables and no insert_deduplication_token, so this is how
-- re-sending stays harmless. Merges happen when they happen: the queries
-- read with FINAL, which collapses at read time whatever is still unmerged.
-- host leads the key so each host's rows sit together in time order.
--
-- PARTITION BY day: a day's captures are one partition, so a time-range
-- query skips other days without reading them, old days are dropped whole
-- (ALTER TABLE ... DROP PARTITION '2026-11-25'), and merges (FINAL's too)
-- never span days. One partition a day keeps the part count low even over
-- years.
CREATE TABLE IF NOT EXISTS tapless.records
(
	day Date,		-- UTC day of ts: the partition
	host String,		-- the NAME given to tapless export
	iface String,		-- capture interface (pcapng if_name or "ifN")
	dir Enum8('unknown' = 0, 'in' = 1, 'out' = 2),	-- at this host
	proto UInt8,		-- 6 TCP, 17 UDP
	src_addr String,	-- text: 198.18.0.1, 2001:db8::1
	src_port UInt16,
	dst_addr String,
	dst_port UInt16,
	-- TCP: sequence number of the message's first byte; UDP: a 32-bit
	-- hash of the message's bytes. Equal at every host that saw it: with
	-- the flow, the key that matches a message across hosts.
	seq UInt32,
	sender_comp String,	-- 49 SenderCompID ("" absent)
	target_comp String,	-- 56 TargetCompID
	msg_seq UInt64,		-- 34 MsgSeqNum (0: absent or not a number)
	msg_type String,	-- 35 MsgType
	cl_ord_id String,	-- 11 ClOrdID
	symbol String,		-- 55 Symbol (first occurrence)
	side String,		-- 54 Side
	ord_status String,	-- 39 OrdStatus
	ts Int64,		-- ns since 1970 UTC, frame of the first byte
	ts_last Int64,		-- the same, frame of the last byte
	wire UInt32,		-- wire length of the first byte's frame
	stamp Enum8('sw' = 0, 'hw' = 1),	-- kernel software or NIC hardware
	stamped_by Enum8('capture' = 0, 'sender' = 1),
	-- From the host's journal. holdover: no fresh measurement, bound_ns
	-- is the last fresh bound grown by the clock's drift limit (bounded).
	sync Enum8('none' = 0, 'in' = 1, 'out' = 2, 'holdover' = 3),
	bound_ns Int64,		-- clock error bound at ts; -1 unknown
	file String,		-- capture file of the first byte
	offset UInt64		-- byte offset of that packet's block in it
)
ENGINE = ReplacingMergeTree
PARTITION BY day
ORDER BY (host, ts, iface, dir, proto, src_addr, src_port, dst_addr,
	  dst_port, seq);

-- A database made before sync had 'holdover' gets it here (tapless export
-- of a holdover sample fails on it until then); on one made above this
-- changes nothing. Over a cluster (distributed.sql) run this statement on
-- every server for tapless.records_local and for tapless.records.
ALTER TABLE tapless.records
	MODIFY COLUMN sync Enum8('none' = 0, 'in' = 1, 'out' = 2, 'holdover' = 3);

-- Transactions at one host as tapless export computed them with the
-- correlator's own code (computed_by = 'host'). Not derived in SQL:
-- tick_to_trade and fill_to_sell need, per symbol, the latest trigger
-- before each order over every bid entry of a market data message (a
-- record keeps only its first symbol), and 18.16 has neither ASOF JOIN nor
-- window functions to find "the latest before". order_to_ack can be
-- checked against the records (see transactions.sql).
--
-- Same reasoning as records for the engine and partitions: the key is the
-- whole row, so a retried batch collapses.
CREATE TABLE IF NOT EXISTS tapless.transactions
(
	day Date,		-- UTC day of ts
	host String,
	kind Enum8('tick_to_trade' = 0, 'fill_to_sell' = 1,
		   'order_to_ack' = 2, 'order_to_fill' = 3),
	ts Int64,		-- stamp (UTC ns) of the order: the sample time
	latency_ns Int64,
	computed_by Enum8('host' = 0)	-- always 'host': by tapless export
)
ENGINE = ReplacingMergeTree
PARTITION BY day
ORDER BY (host, kind, ts, latency_ns);
