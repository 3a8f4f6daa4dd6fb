-- Alerts (issue 11, README "Alerts"): every transition of a (rule, subject)
-- is a row: fired, renotified (a reminder while firing), resolved. Its key
-- (src/alerts/state.ts, transitionKey) is the same whichever worker wrote it
-- and however often: a repeated write collapses on merge and under FINAL.
-- Times are Unix milliseconds (the state machine's clock), as UInt64.
CREATE TABLE IF NOT EXISTS alerts
(
    rule               String,
    subject            String,
    transition_key     String,
    notification       String,
    state              String,
    severity           String,
    fired_at_ms        UInt64,
    -- 0 while firing.
    resolved_at_ms     UInt64,
    -- When this transition happened (its notification was due).
    at_ms              UInt64,
    notifications      UInt32,
    detail             String,
    recorded_at        DateTime('UTC')
)
ENGINE = ReplacingMergeTree
ORDER BY (rule, subject, transition_key);

-- Each (rule, subject)'s state now: its latest transition. What `agentledger
-- alerts` lists, and what the workers' state is rebuilt from when Redis has
-- lost it.
CREATE VIEW IF NOT EXISTS alerts_current AS
SELECT rule, subject,
       last_state AS state,
       last_severity AS severity,
       last_fired_at_ms AS fired_at_ms,
       last_resolved_at_ms AS resolved_at_ms,
       last_at_ms AS last_notified_at_ms,
       last_notifications AS notifications,
       last_detail AS detail,
       transitions
FROM
(
    SELECT rule, subject,
           argMax(state, at_ms) AS last_state,
           argMax(severity, at_ms) AS last_severity,
           argMax(fired_at_ms, at_ms) AS last_fired_at_ms,
           argMax(resolved_at_ms, at_ms) AS last_resolved_at_ms,
           max(at_ms) AS last_at_ms,
           argMax(notifications, at_ms) AS last_notifications,
           argMax(detail, at_ms) AS last_detail,
           count() AS transitions
    FROM alerts FINAL
    GROUP BY rule, subject
) AS latest;

-- Where the next alert sweep starts: the newest ingest stamp the last
-- finished sweep saw (as rollup_sweeps does for the rollups).
CREATE TABLE IF NOT EXISTS alert_sweeps
(
    seen_through  DateTime('UTC'),
    evaluated     UInt64,
    transitions   UInt64,
    finished_at   DateTime('UTC')
)
ENGINE = MergeTree
ORDER BY finished_at;
