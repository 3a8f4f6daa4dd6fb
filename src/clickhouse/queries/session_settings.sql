-- The values of these settings in this session (from the user's profile):
-- what `serve` checks a read-only user's profile sets on a cluster.
-- param: names Array(String) ['prefer_localhost_replica', 'distributed_product_mode']
SELECT name, value FROM system.settings WHERE name IN {names:Array(String)};
