-- Every (rule, subject)'s state as the alerts table holds it: what the
-- workers' state in Redis is rebuilt from when Redis has lost it.
SELECT rule, subject, state, severity, fired_at_ms, resolved_at_ms, last_notified_at_ms, notifications, detail
FROM alerts_current;
