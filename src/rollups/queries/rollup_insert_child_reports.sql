-- Writes what these loops reported of their children into
-- loop_child_reports under `version` (0015), as loop_reconciliation reads
-- it: per child, the reporter's last SubAgentCompleted with a child_spend,
-- its own reports only (a fork's replayed reports, seq <= its ForkedFrom's
-- at_seq, name its source's child). A child whose every report here was a
-- replay gets has_report 0, so a late ForkedFrom takes the report back.
-- Its whole-table form (a rebuild, a sweep of many loops) is this text
-- without its loop_ids conditions: everyLoopSql() in src/rollups/statements.ts.
-- param: loop_ids Array(String) ('loop-a', 'loop-b')
-- param: version UInt64 7
INSERT INTO loop_child_reports (child_loop_id, reporter, version, seq, has_report, spend_pico)
SELECT child_loop_id, reporter, {version:UInt64},
       maxIf(seq, seq > replayed_to), countIf(seq > replayed_to) > 0, argMaxIf(spend_pico, seq, seq > replayed_to)
FROM
(
    SELECT loop_id AS reporter, seq, child_loop_id, spend_pico
    FROM envelopes FINAL
    WHERE loop_id IN {loop_ids:Array(String)}
      AND kind_class = 'SubAgentCompleted' AND child_loop_id != '' AND spend_raw != '' AND verdict NOT IN ('malformed', 'fork')
) AS reports
ANY LEFT JOIN
(
    SELECT loop_id AS reporter, max(fork_at_seq) AS replayed_to
    FROM envelopes FINAL
    WHERE loop_id IN {loop_ids:Array(String)} AND kind_class = 'ForkedFrom' AND verdict NOT IN ('malformed', 'fork')
    GROUP BY loop_id
) AS forks USING reporter
GROUP BY child_loop_id, reporter;
