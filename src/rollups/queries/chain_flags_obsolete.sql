-- The loops whose kept chain flags (0021) hold rows below the loop's
-- committed version, with that version (`top`): what chain_flags_prune.sql
-- drops. A loop never committed is not listed (its rows may be a recompute
-- still running), nor are rows above the committed version (one running now).
-- GLOBAL: on a cluster the view is read once, where the query is asked (a
-- shard would look for it in its default database); on one server it
-- changes nothing.
SELECT loop_id, any(current_version) AS top
FROM chain_flags GLOBAL ANY INNER JOIN chain_flag_current USING loop_id
WHERE version < current_version
GROUP BY loop_id
ORDER BY loop_id;
