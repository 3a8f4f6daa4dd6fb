-- Records a finished chain-flag step (0021): every loop with no row ingested
-- at or after `seen_through` (Unix seconds) less `late_s` has its exact rows
-- in chain_flags. The margin is stored: the *_now views read it.
-- param: version UInt64 7
-- param: seen_through UInt32 1764504000
-- param: late_s UInt32 900
INSERT INTO chain_flag_marks (mark, version, seen_through, late_s, finished_at)
VALUES (0, {version:UInt64}, toDateTime({seen_through:UInt32}), {late_s:UInt32}, now());
