-- The open hours of a collected call (`call.2`, its hour: fragments/open_hour_call.sql
-- collects it): from the hour holding the last finished sweep's newest
-- ingest stamp on (every hour when no sweep has finished), in an hour the
-- window [since, until) overlaps (since rounded down to its hour). The
-- includers (spend_rollup_groups.sql, spend_rollup_root_groups.sql)
-- declare since and until.
call.2 >= (SELECT toStartOfHour(max(seen_through)) FROM rollup_sweeps)
AND call.2 >= toStartOfHour(toDateTime({since:UInt32})) AND call.2 < toDateTime({until:UInt32})
