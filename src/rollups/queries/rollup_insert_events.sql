-- Writes these loops' counted ToolCalled, ConvergenceWarning and
-- SubAgentCompleted envelopes in these hours (Unix seconds of their start)
-- into event_rollup_hour under `version` (0015). Counted as tool_error_rates,
-- convergence_warnings and subagent_outcomes count them (0010): deduplicated
-- rows, links neither malformed nor a second version, a fork's replayed
-- envelopes (seq <= its ForkedFrom's at_seq) left to its source. Spelled out,
-- not read from those views, so the filters reach the FINAL read on 18.16; the
-- rollups test checks the two agree.
-- Its whole-table form (a rebuild, a sweep of many loops) is this text
-- without its loop_ids conditions: everyLoopSql() in src/rollups/statements.ts.
-- param: loop_ids Array(String) ('loop-a', 'loop-b')
-- param: hours Array(UInt32) (1764504000, 1764507600)
-- param: version UInt64 7
INSERT INTO event_rollup_hour (hour, version, kind, label, outcome, loop_id, events, flagged)
SELECT bucket, {version:UInt64}, kind_class, event_label, event_outcome, warned_loop, count(), countIf(is_error = 1)
FROM
(
    SELECT toStartOfHour(time) AS bucket, kind_class,
           multiIf(kind_class = 'ToolCalled', tool, kind_class = 'ConvergenceWarning', detector, definition) AS event_label,
           if(kind_class = 'SubAgentCompleted', completed_outcome, '') AS event_outcome,
           if(kind_class = 'ConvergenceWarning', loop_id, '') AS warned_loop,
           tool_is_error AS is_error
    FROM
    (
        SELECT loop_id, seq, time, kind_class, tool, tool_is_error, detector, definition, outcome AS completed_outcome
        FROM envelopes FINAL
        WHERE loop_id IN {loop_ids:Array(String)}
          AND kind_class IN ('ToolCalled', 'ConvergenceWarning', 'SubAgentCompleted')
          AND verdict NOT IN ('malformed', 'fork')
          AND toUInt32(toStartOfHour(time)) IN {hours:Array(UInt32)}
    ) AS counted
    include(replayed_to_join)
    WHERE seq > replayed_to
)
GROUP BY bucket, kind_class, event_label, event_outcome, warned_loop;
