-- Where the next rollup sweep starts: the newest ingest stamp the last
-- finished sweep saw (0: none yet) and its version, the newest stamp stored
-- now (Unix seconds), and the highest version written or claimed anywhere
-- (the version counter never goes below it).
SELECT
    (SELECT toUInt32(max(seen_through)) FROM rollup_sweeps) AS swept_through,
    (SELECT max(version) FROM rollup_sweeps) AS swept_version,
    greatest((SELECT toUInt32(max(ingested_at)) FROM envelopes), (SELECT toUInt32(max(ingested_at)) FROM craze_events)) AS stored_through,
    greatest(greatest(greatest((SELECT max(version) FROM rollup_commits), (SELECT max(version) FROM rollup_sweeps)), (SELECT max(version) FROM loop_roots)), (SELECT max(version) FROM rollup_claims)) AS top_version;
