-- Loops, envelopes and verdict counts over the stored envelopes. FINAL applies
-- the ReplacingMergeTree's deduplication at query time.
SELECT verdict, count() AS envelopes, uniqExact(loop_id) AS loops
FROM envelopes FINAL
GROUP BY verdict
ORDER BY verdict;
