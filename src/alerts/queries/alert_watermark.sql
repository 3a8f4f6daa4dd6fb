-- Where the next alert sweep starts (the newest ingest stamp the last one saw,
-- 0: none), and the newest ingest stamp stored now (Unix seconds).
SELECT
    (SELECT toUInt32(max(seen_through)) FROM alert_sweeps) AS swept_through,
    (SELECT toUInt32(max(ingested_at)) FROM envelopes) AS stored_through;
