-- Every hour in [from, until) (Unix seconds) that holds rollup candidates
-- (model, tool, convergence and sub-agent envelopes, craze usage reports) or
-- a committed rollup (an hour whose rows went away must be recomputed empty):
-- what `rollups rebuild` recomputes.
-- param: from UInt32 1764460800
-- param: until UInt32 1764547200
SELECT DISTINCT h
FROM
(
    SELECT toUInt32(toStartOfHour(time)) AS h FROM envelopes
    WHERE kind_class IN ('ModelCalled', 'ToolCalled', 'ConvergenceWarning', 'SubAgentCompleted') AND time >= toDateTime({from:UInt32}) AND time < toDateTime({until:UInt32})
    UNION ALL
    SELECT toUInt32(toStartOfHour(at)) AS h FROM craze_events
    WHERE report = 1 AND at >= toDateTime({from:UInt32}) AND at < toDateTime({until:UInt32})
    UNION ALL
    SELECT toUInt32(hour) AS h FROM rollup_commits
    WHERE hour >= toDateTime({from:UInt32}) AND hour < toDateTime({until:UInt32})
)
ORDER BY h;
