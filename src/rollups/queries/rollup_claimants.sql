-- Every claimant of a rollup version (0018): a recompute that finds one not
-- its own writes nothing more under it.
-- param: version UInt64 7
SELECT claimant
FROM rollup_claims
WHERE version = {version:UInt64};
