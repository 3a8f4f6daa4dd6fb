-- Commits a recompute: from now on readers take these hours' rows of `version`
-- (unless a higher version is committed for an hour).
-- param: hours Array(UInt32) [1764504000, 1764507600]
-- param: version UInt64 7
INSERT INTO rollup_commits (hour, version, committed_at)
SELECT toDateTime(h), {version:UInt64}, now()
FROM (SELECT arrayJoin({hours:Array(UInt32)}) AS h);
