-- Commits a recompute: from now on readers take these hours' rows of `version`
-- (unless a higher version is committed for an hour). An hour that already
-- has a commit of this version or a higher one is left as it is: a
-- recompute never commits an hour another one has replaced since.
-- param: hours Array(UInt32) [1764504000, 1764507600]
-- param: version UInt64 7
INSERT INTO rollup_commits (hour, version, committed_at)
SELECT toDateTime(h), {version:UInt64}, now()
FROM (SELECT arrayJoin({hours:Array(UInt32)}) AS h)
WHERE h NOT IN (SELECT toUInt32(hour) FROM rollup_commits WHERE version >= {version:UInt64} AND toUInt32(hour) IN {hours:Array(UInt32)});
