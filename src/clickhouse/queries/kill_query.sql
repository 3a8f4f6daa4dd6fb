-- Stops a query that still runs (an insert whose answer was lost) and waits
-- until it has: after this, whatever it wrote is all it will ever write.
-- param: query_id String 'agentledger-envelopes-0'
KILL QUERY WHERE query_id = {query_id:String} SYNC;
