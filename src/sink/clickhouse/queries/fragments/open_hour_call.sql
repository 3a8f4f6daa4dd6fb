-- The condition on an envelopes row that makes it a call of the open hours
-- spend_hourly_now (0015) counts live: a verified ModelCalled link (ok, gap,
-- time_regression) timed from the hour holding the last finished sweep's
-- newest ingest stamp on (every hour when no sweep has finished), in an hour
-- the window [since, until) overlaps (since rounded down to its hour). For
-- spend_rollup_groups.sql and spend_rollup_root_groups.sql, which declare
-- since and until.
kind_class = 'ModelCalled' AND verdict IN ('ok', 'gap', 'time_regression')
AND time >= (SELECT toStartOfHour(max(seen_through)) FROM rollup_sweeps)
AND time >= toStartOfHour(toDateTime({since:UInt32})) AND toStartOfHour(time) < toDateTime({until:UInt32})
