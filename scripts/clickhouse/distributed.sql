-- distributed.sql — tapless's tables over a ClickHouse cluster named
-- "tapless" (remote_servers in each server's config; README.md here). Run
-- on EVERY server of the cluster, after schema.sql:
--
--   clickhouse-client --multiquery < scripts/clickhouse/schema.sql
--   clickhouse-client --multiquery < scripts/clickhouse/distributed.sql
--
-- It renames schema.sql's tables to tapless.records_local and
-- tapless.transactions_local (each server's share, rows kept) and puts in
-- their place Distributed tables of the same names and columns: tapless
-- export and the shipped queries keep writing and reading
-- tapless.records and tapless.transactions, unchanged. Run it once (the
-- renames fail the second time: the _local tables exist).
--
-- Sharding: records by the FIX session, the unordered pair of CompIDs
-- (49, 56). Every host's record of one message has the same CompIDs, both
-- directions of a session share the pair, and so do a gateway's (NAT's)
-- two legs when it passes the CompIDs through: all of a message's
-- observations land on one shard. The per-message grouping the hop
-- queries do (hops.sql's innermost GROUP BY) can then run on each shard
-- alone, which the setting distributed_group_by_no_merge = 1 asks for:
--
--   clickhouse-client --distributed_group_by_no_merge=1 < scripts/clickhouse/hops.sql
--
-- (the same for hops_per_minute.sql and hops_by_session.sql; NOT for
-- transactions.sql, whose grouping by host is spread over shards and must
-- be merged: run it without the setting). Without the setting the hop
-- queries are right too, on any sharding, but every shard sends its
-- per-message groups to the server running the query to be merged there.
-- Messages without CompIDs (49 or 56 absent) all go to one shard.
--
-- Transactions by host: any sharding would do, their queries merge.
--
-- Insert: a Distributed table queues rows on the server inserted into and
-- sends them on in the background; give tapless export a connection with
-- insert_distributed_sync=1 (?insert_distributed_sync=1 on the HTTP URL)
-- so that a batch acknowledged is on its shard.

RENAME TABLE tapless.records TO tapless.records_local,
	tapless.transactions TO tapless.transactions_local;

CREATE TABLE tapless.records AS tapless.records_local
ENGINE = Distributed(tapless, tapless, records_local,
	cityHash64(if(sender_comp < target_comp, sender_comp, target_comp),
		   if(sender_comp < target_comp, target_comp, sender_comp)));

CREATE TABLE tapless.transactions AS tapless.transactions_local
ENGINE = Distributed(tapless, tapless, transactions_local, cityHash64(host));
