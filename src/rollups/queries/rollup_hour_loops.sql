-- The loops with rollup candidates (model calls, tool calls, convergence
-- warnings, sub-agents completed) in these hours (Unix seconds of their start).
-- param: hours Array(UInt32) (1764504000, 1764507600)
SELECT DISTINCT loop_id
FROM envelopes
WHERE kind_class IN ('ModelCalled', 'ToolCalled', 'ConvergenceWarning', 'SubAgentCompleted') AND toUInt32(toStartOfHour(time)) IN {hours:Array(UInt32)};
