-- The loops with a row stored at or after `since` (Unix seconds): the ones
-- whose place in the tree may differ from what loop_roots holds. For each,
-- every parent its LoopStarted rows name and every child its SubAgentSpawned
-- rows name, of any version and verdict (a superset of the tree's links:
-- enough to find candidates, never used as the links themselves). Read by
-- primary key for those loops (the inner scan of ingested_at is pruned by
-- partition).
-- param: since UInt32 1764504000
SELECT loop_id,
       groupUniqArrayIf(parent_loop_id, kind_class = 'LoopStarted' AND parent_loop_id != '') AS parents,
       groupUniqArrayIf(child_loop_id, kind_class = 'SubAgentSpawned' AND child_loop_id != '') AS children
FROM envelopes
WHERE loop_id IN (SELECT loop_id FROM envelopes WHERE ingested_at >= toDateTime({since:UInt32}))
GROUP BY loop_id;
