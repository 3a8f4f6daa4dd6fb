-- The condition on an envelopes row that makes it a call spend_hourly_now
-- (0015) counts: a verified ModelCalled link (ok, gap, time_regression). Its
-- window, the open hours, is fragments/open_hour_window.sql, applied to the
-- collected calls: over a Distributed table 18.16 loses an aggregate whose
-- condition holds a scalar subquery (code 10, "Not found column
-- groupArrayIf(…)"), so none is put here. For spend_rollup_groups.sql and
-- spend_rollup_root_groups.sql.
kind_class = 'ModelCalled' AND verdict IN ('ok', 'gap', 'time_regression')
