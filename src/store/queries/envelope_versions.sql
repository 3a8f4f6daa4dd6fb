-- Every stored version of given (loop, seq) pairs, in the order they were
-- stored: the chain's own first, then forks. A copy of any of them is a
-- redelivery (dropped); anything else is a new fork, shown against the first.
-- param: keys Array(Tuple(String, UInt64)) (('loop-a', 1), ('loop-b', 2))
SELECT loop_id, seq, hash, time_text, kind, payload
FROM envelopes
WHERE (loop_id, seq) IN {keys:Array(Tuple(String, UInt64))}
  AND verdict != 'malformed'
ORDER BY loop_id, seq, kafka_offset;
