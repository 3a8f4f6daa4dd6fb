-- Loops whose root or name a sweep or rebuild wrote after the last finished
-- sweep (`since_version`): one that died between writing loop_roots and
-- recomputing those loops' hours leaves them here, and the next sweep redoes
-- their hours.
-- param: since_version UInt64 7
SELECT DISTINCT loop_id
FROM loop_roots
WHERE version > {since_version:UInt64};
