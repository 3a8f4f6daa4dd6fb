-- The rollup rows of the hours [since, until) (Unix seconds) of a source
-- ('' for every source), each only if it is its hour's committed version,
-- the highest in rollup_commits (0015): what the page's top roots count.
-- The includer declares since, until and source.
hour >= toDateTime({since:UInt32}) AND hour < toDateTime({until:UInt32})
AND ({source:String} = '' OR source = {source:String})
AND (hour, version) IN
(
    SELECT hour, max(version) FROM rollup_commits
    WHERE hour >= toDateTime({since:UInt32}) AND hour < toDateTime({until:UInt32})
    GROUP BY hour
)
