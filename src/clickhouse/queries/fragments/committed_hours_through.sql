-- The condition that keeps a rollup row (hour, version) only if it is its
-- hour's committed version, the highest in rollup_commits (0015), for the
-- hours [since, until] (Unix seconds, both ends in): the spend_budget rule's
-- window (src/alerts/budgets.ts). The includer declares since and until and
-- writes the same bounds on its own table's hour.
(hour, version) IN
(
    SELECT hour, max(version)
    FROM rollup_commits
    WHERE hour >= toDateTime({since:UInt32}) AND hour <= toDateTime({until:UInt32})
    GROUP BY hour
)
