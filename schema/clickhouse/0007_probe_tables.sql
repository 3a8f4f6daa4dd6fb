-- Twins of the two event tables that store nothing (engine Null): an insert
-- into one is parsed and type-checked exactly as into the real table, and
-- then dropped. When ClickHouse refuses an insert for its data, the consumer
-- inserts halves of it here until it has found the rows the server cannot
-- take, dead-letters their records and stores the rest (README, "Bad
-- input"). They need no more rights than the real tables: INSERT.
CREATE TABLE IF NOT EXISTS envelopes_probe AS envelopes ENGINE = Null;

CREATE TABLE IF NOT EXISTS craze_events_probe AS craze_events ENGINE = Null;
