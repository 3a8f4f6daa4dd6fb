-- Every loop of the loop runtime with its own facts (view runtime_loops) and
-- its own spend (view runtime_spend: verified and not replayed; unverified
-- model cost apart), money and tokens summed as Decimal128 and read as text,
-- rendered in two pieces (hi, lo) because 18.16's toString garbles 21 digits
-- and more (migrations 0012 and 0017 say how).
-- The tree (parent from either side, root, subtree cost) is folded by the
-- caller from these rows and loop_spawns. A loop with no spend row gets
-- zeros ('' for the text sums: ANY LEFT JOIN fills defaults).
-- The spend columns are fragments/loop_spend_texts.sql over
-- fragments/loop_spend_sums.sql, as in runtime_loop_rows_of.sql.
SELECT loop_id, name, started_parent, started_depth, started, finished_outcome, finished_error,
       iterations, subagents_spawned, subagents_completed, subagents_failed, forked_from, forked_at_seq,
       toString(first_time) AS first_time_text, toString(last_time) AS last_time_text,
       model_calls, input_tokens_sum, output_tokens_sum, model_cost, budget_cost, unverified_model_cost
FROM
(
    SELECT loop_id, name, started_parent, started_depth, started, finished_outcome, finished_error,
           iterations, subagents_spawned, subagents_completed, subagents_failed, forked_from, forked_at_seq,
           first_time, last_time
    FROM runtime_loops
) AS loops
ANY LEFT JOIN
(
    include(loop_spend_texts)
    FROM
    (
        include(loop_spend_sums)
        FROM runtime_spend
        GROUP BY loop_id
    ) AS sums
) AS spend USING loop_id
ORDER BY loop_id;
