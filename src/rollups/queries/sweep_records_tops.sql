-- What the pruning of the per-sweep tables keeps whatever their age
-- (rollup_sweeps, rollup_claims, alert_sweeps: one row per sweep, forever
-- without it): the rows recovery reads, the highest version and the newest
-- swept stamp of each. With the rows older than `before` (Unix seconds) that
-- a prune would drop, so it runs only when there are some.
-- param: before UInt32 1764460800
SELECT
    (SELECT max(version) FROM rollup_sweeps) AS sweep_version,
    (SELECT toUInt32(max(seen_through)) FROM rollup_sweeps) AS sweep_through,
    (SELECT max(version) FROM rollup_claims) AS claim_version,
    (SELECT toUInt32(max(seen_through)) FROM alert_sweeps) AS alert_through,
    (SELECT count() FROM rollup_sweeps WHERE finished_at < toDateTime({before:UInt32}) AND version < (SELECT max(version) FROM rollup_sweeps) AND seen_through < (SELECT max(seen_through) FROM rollup_sweeps)) AS old_sweeps,
    (SELECT count() FROM rollup_claims WHERE claimed_at < toDateTime({before:UInt32}) AND version < (SELECT max(version) FROM rollup_claims)) AS old_claims,
    (SELECT count() FROM alert_sweeps WHERE finished_at < toDateTime({before:UInt32}) AND seen_through < (SELECT max(seen_through) FROM alert_sweeps)) AS old_alert_sweeps;
