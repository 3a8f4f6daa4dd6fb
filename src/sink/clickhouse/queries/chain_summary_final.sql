-- Loops, envelopes and verdict counts over the stored envelopes. FINAL applies
-- the ReplacingMergeTree's deduplication at query time: the exact answer when
-- parts may hold two copies of one key (reads.ts verdictCounts), at the cost
-- of merging every envelope.
SELECT verdict, count() AS envelopes, uniqExact(loop_id) AS loops
FROM envelopes FINAL
GROUP BY verdict
ORDER BY verdict;
