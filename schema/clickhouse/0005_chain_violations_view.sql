-- chain_violations becomes a plain view over the deduplicated envelopes.
--
-- Why (DESIGN.md §4): the materialized view of 0002 fired on each envelopes
-- insert, but its write was not atomic with it. When the target refused the
-- write ("Too many parts", a memory limit, a restart between the two), the
-- envelope rows were durable, the retry saw them landed and moved on, and the
-- violations were lost for good (measured: 26 of 36). A materialized view on
-- the raw insert also fires again for a retried or a zombie's insert.
--
-- Rule for this schema: nothing that must be exact is derived through a
-- materialized view on a raw insert. Derived tables read `FINAL` (the
-- ReplacingMergeTree's deduplication at query time) of the table they derive
-- from, so they can neither lose nor double a row. The rollups follow it too.
--
-- The 0002 table's rows are all derivable from envelopes: dropping it loses
-- nothing. Statements are idempotent, so a run killed half-way is finished by
-- the next one.
DROP TABLE IF EXISTS chain_violations_mv;

DROP TABLE IF EXISTS chain_violations;

-- Every chain violation with its evidence: the envelopes rows whose verdict is
-- not 'ok' (duplicates are never stored). For a mismatch, expected_hash is the
-- recomputed hash; for a fork, evidence holds the first stored version of the
-- same seq. Columns as in 0002, so queries and dashboards keep working.
CREATE VIEW IF NOT EXISTS chain_violations AS
SELECT
    loop_id, seq, verdict, detail, kind, time, time_text,
    hash AS carried_hash,
    computed_hash AS expected_hash,
    payload, evidence, kafka_topic, kafka_partition, kafka_offset, ingested_at
FROM envelopes FINAL
WHERE verdict != 'ok';
