-- Drops the version claims (0018) made before `before` (Unix seconds),
-- except the highest (the version counter's floor). A recompute checks its
-- own version's claimants while it runs, and none runs for a day. A
-- mutation: needs the migrator's rights (ALTER).
-- param: before UInt32 1764460800
-- param: top_version UInt64 7
ALTER TABLE rollup_claims DELETE WHERE claimed_at < toDateTime({before:UInt32}) AND version < {top_version:UInt64};
