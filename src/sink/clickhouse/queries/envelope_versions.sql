-- The stored version of given (loop, seq) pairs, to tell a redelivery (same
-- hash and content: dropped) from a fork (a second version: evidence).
-- param: keys Array(Tuple(String, UInt64)) (('loop-a', 1), ('loop-b', 2))
SELECT loop_id, seq, hash, time_text, kind, payload
FROM envelopes
WHERE (loop_id, seq) IN {keys:Array(Tuple(String, UInt64))}
  AND verdict NOT IN ('fork', 'malformed')
ORDER BY loop_id, seq, kafka_offset
LIMIT 1 BY loop_id, seq;
