-- The hours (Unix seconds of their start) in which these loops have rollup
-- candidates (model calls, tool calls, convergence warnings, sub-agents completed).
-- param: loop_ids Array(String) ('loop-a', 'loop-b')
SELECT DISTINCT toUInt32(toStartOfHour(time)) AS h
FROM envelopes
WHERE loop_id IN {loop_ids:Array(String)} AND kind_class IN ('ModelCalled', 'ToolCalled', 'ConvergenceWarning', 'SubAgentCompleted');
