-- Envelopes and loops per verdict as `envelopes FINAL` counts them (one row
-- per key, the copy FINAL keeps), from the kept chain flags (0021): per loop,
-- its flags by verdict (chain_violations_now) and its keys
-- (chain_loop_keys_now); its 'ok' envelopes are its keys less its flags.
-- Both views read the kept rows for the loops not changed since the
-- chain-flag mark and those loops' envelopes by primary key for the others.
-- One row per loop and verdict after the ARRAY JOIN, so a count is its loops.
SELECT verdict, sum(n) AS envelopes, count() AS loops
FROM
(
    SELECT loop_id, keys, flag_verdicts, flag_counts
    FROM chain_loop_keys_now
    ANY LEFT JOIN
    (
        SELECT loop_id, groupArray(flag_verdict) AS flag_verdicts, groupArray(flag_n) AS flag_counts
        FROM
        (
            SELECT loop_id, verdict AS flag_verdict, count() AS flag_n
            FROM chain_violations_now
            GROUP BY loop_id, flag_verdict
        ) AS per_verdict
        GROUP BY loop_id
    ) AS flagged USING loop_id
) AS per_loop
ARRAY JOIN arrayConcat(flag_verdicts, ['ok']) AS verdict, arrayConcat(flag_counts, [toUInt64(keys - arraySum(flag_counts))]) AS n
WHERE n > 0
GROUP BY verdict
ORDER BY verdict;
