-- Envelopes and loops per verdict, without FINAL, and the parts read (their
-- `_part` names). Equal to the FINAL read (chain_summary_final.sql) when no
-- two of those parts can hold a copy of one key: reads.ts verdictCounts
-- checks that from envelope_part_ranges.sql before it trusts these counts.
SELECT verdict, count() AS envelopes, uniqExact(loop_id) AS loops, groupUniqArray(_part) AS parts
FROM envelopes
GROUP BY verdict
ORDER BY verdict;
