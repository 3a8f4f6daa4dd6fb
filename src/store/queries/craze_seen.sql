-- Which of the given (session, incarnation, seq) are stored already: a
-- redelivery of one of them is dropped.
-- param: keys Array(Tuple(String, String, UInt64)) (('s1', 'i1', 3), ('s1', 'i1', 4))
SELECT DISTINCT session_id, incarnation, seq
FROM craze_events
WHERE (session_id, incarnation, seq) IN {keys:Array(Tuple(String, String, UInt64))}
  AND verdict != 'malformed';
