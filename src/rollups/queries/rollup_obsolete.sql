-- The hours (Unix seconds of their start) holding rollup rows or commits of
-- more than one version, each with its highest committed version: every row
-- and commit of the hour below that version is never read again.
SELECT toUInt32(hour) AS h, max(version) AS top
FROM rollup_commits
WHERE hour IN
(
    SELECT hour
    FROM
    (
        SELECT hour, version FROM spend_rollup_hour
        UNION ALL
        SELECT hour, version FROM spend_rollup_model_hour
        UNION ALL
        SELECT hour, version FROM spend_rollup_root_hour
        UNION ALL
        SELECT hour, version FROM event_rollup_hour
        UNION ALL
        SELECT hour, version FROM rollup_commits
    )
    GROUP BY hour
    HAVING uniqExact(version) > 1
)
GROUP BY hour
ORDER BY h;
