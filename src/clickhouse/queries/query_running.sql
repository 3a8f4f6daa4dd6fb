-- Whether a query (by its query_id) still runs on this server: an insert whose
-- answer was lost may still be writing, and must be settled before a retry
-- asks whether it landed.
-- param: query_id String 'agentledger-envelopes-0'
SELECT count() AS n
FROM system.processes
WHERE query_id = {query_id:String};
