-- The page's unverified model cost (GET /api/overview): ModelCalled
-- envelopes whose own link did not verify (mismatch, fork: a second version,
-- regression) timed at or after {since} (Unix seconds), a fork's replays
-- aside, as unverified_spend counts them. Deduplicated by the table's key
-- (what FINAL does) after filtering on the verdict (PREWHERE: only that
-- column is read for every envelope), and the forks are looked up by primary
-- key for those loops only. Filters: model and loop name (loop_roots), '' for all.
-- param: since UInt32 1762041600
-- param: model String ''
-- param: name String ''
WITH toDecimal128('1000000000000000000', 0) AS e18
SELECT toString(calls) AS calls_text, if(abs(cost) < e18, toString(cost - intDiv(cost, e18) * e18),
          concat(toString(intDiv(cost, e18)), substring(toString(abs(cost - intDiv(cost, e18) * e18) + e18), 2))) AS cost_text
FROM
(
    SELECT count() AS calls, sum(toDecimal128(cost_pico, 0)) AS cost
    FROM
    (
        SELECT loop_id, cost_pico, model
        FROM
        (
            SELECT loop_id, seq, any(cost_pico) AS cost_pico, any(model_name) AS model
            FROM envelopes
            PREWHERE verdict IN ('mismatch', 'fork', 'regression')
            WHERE kind_class = 'ModelCalled' AND time >= toDateTime({since:UInt32})
            GROUP BY loop_id, seq, kafka_topic, kafka_partition, kafka_offset
        ) AS calls
        ANY LEFT JOIN
        (
            SELECT loop_id, max(fork_at_seq) AS replayed_to
            FROM envelopes
            WHERE kind_class = 'ForkedFrom' AND verdict NOT IN ('malformed', 'fork')
              AND loop_id IN (SELECT loop_id FROM envelopes PREWHERE verdict IN ('mismatch', 'fork', 'regression'))
            GROUP BY loop_id
        ) AS forks USING loop_id
        WHERE seq > replayed_to
    ) AS counted
    ANY LEFT JOIN (SELECT loop_id, loop_name FROM loop_roots FINAL) AS roots USING loop_id
    WHERE ({model:String} = '' OR model = {model:String})
      AND ({name:String} = '' OR loop_name = {name:String})
) AS sums;
