-- Claims a rollup version for one recompute (0018), before it writes anything.
-- param: version UInt64 7
-- param: claimant String 'c3f2b7e0-0d39-4d0e-9a56-1c1f0f3b8c2a'
INSERT INTO rollup_claims (version, claimant, claimed_at)
VALUES ({version:UInt64}, {claimant:String}, now());
