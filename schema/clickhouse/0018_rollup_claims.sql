-- Who holds each rollup version (README "Rollups"). A version comes from
-- one Redis counter (0013), but Redis can hand the same number out twice:
-- after it lost its last writes (a restart, a failover to a replica that
-- had not got them) it counts on from the highest version ClickHouse
-- holds, and a recompute that has taken its version but committed nothing
-- yet is in no table. Two recomputes then wrote one version and committed
-- it, and readers, which take each hour's highest committed version whole,
-- summed both writers' rows.
--
-- A recompute now writes (version, claimant) here, a random claimant of its
-- own, before it writes anything else, then reads the version's claimants
-- back: one that finds another claimant writes nothing. (Two that claim at
-- once may both give up; two that both go on cannot exist, as the later
-- claim's read follows the earlier claim's insert.) The version counter is
-- raised above every claimed version, so a recompute after the lost writes
-- gets a fresh one. The worker drops claims older than what recovery needs.
CREATE TABLE IF NOT EXISTS rollup_claims
(
    version     UInt64,
    claimant    String,
    claimed_at  DateTime('UTC')
)
ENGINE = MergeTree
ORDER BY version;
