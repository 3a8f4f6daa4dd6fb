-- `agentledger alerts`: each (rule, subject)'s state now (view
-- alerts_current, migration 0016), firing first, then the most recently
-- notified; ties by rule and subject, byte order. `state` is firing,
-- resolved or '' for both; `rule` is one rule id or '' for every rule (no
-- rule id is empty). Times are Unix milliseconds, as text (UInt64).
-- param: state String 'firing'
-- param: rule String 'stuck_loop'
-- param: limit UInt64 100
SELECT rule, subject, state, severity,
       toString(fired_at_ms) AS fired_at_text,
       toString(resolved_at_ms) AS resolved_at_text,
       toString(last_notified_at_ms) AS last_notified_at_text,
       toUInt32(notifications) AS notification_count,
       toString(transitions) AS transition_count,
       detail
FROM alerts_current
WHERE ({state:String} = '' OR state = {state:String})
  AND ({rule:String} = '' OR rule = {rule:String})
ORDER BY state = 'firing' DESC, last_notified_at_ms DESC, rule, subject
LIMIT {limit:UInt64};
