-- Per (session, incarnation): the highest seq stored in order and the
-- accounting state after it, to go on exactly where the last consumer stopped.
-- param: sessions Array(String) ('s1', 's2')
SELECT session_id, incarnation, seq, account_state
FROM craze_events
WHERE session_id IN {sessions:Array(String)} AND verdict IN ('ok', 'gap')
ORDER BY session_id, incarnation, seq DESC
LIMIT 1 BY session_id, incarnation;
