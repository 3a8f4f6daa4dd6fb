-- The loop_summaries rows (0020) of the loops {loop_ids}, each its highest
-- version's (argMax, not FINAL: FINAL on 18.16 merges the whole table before
-- the filter, this reads the loops' granules by primary key), those with a
-- row in runtime_loops only (present), in runtime_loop_rows.sql's columns
-- plus the children each spawned. Its every-loop form is this text without
-- the loop_ids condition (everyLoopSql() in src/rollups/statements.ts). The
-- inner names differ from the outer ones: 18.16 resolves an alias inside an
-- aggregate.
-- param: loop_ids Array(String) ['loop-a', 'loop-b']
SELECT loop_id,
       argMax(s_name, v) AS name, argMax(s_started_parent, v) AS started_parent, argMax(s_started_depth, v) AS started_depth,
       argMax(s_started, v) AS started, argMax(s_finished_outcome, v) AS finished_outcome, argMax(s_finished_error, v) AS finished_error,
       argMax(s_iterations, v) AS iterations, argMax(s_subagents_spawned, v) AS subagents_spawned,
       argMax(s_subagents_completed, v) AS subagents_completed, argMax(s_subagents_failed, v) AS subagents_failed,
       argMax(s_forked_from, v) AS forked_from, argMax(s_forked_at_seq, v) AS forked_at_seq,
       argMax(s_first_time, v) AS first_time_text, argMax(s_last_time, v) AS last_time_text,
       argMax(s_model_calls, v) AS model_calls, argMax(s_input_tokens, v) AS input_tokens_sum, argMax(s_output_tokens, v) AS output_tokens_sum,
       argMax(s_model_cost, v) AS model_cost, argMax(s_budget_cost, v) AS budget_cost, argMax(s_unverified, v) AS unverified_model_cost,
       argMax(s_children, v) AS children, argMax(s_present, v) AS is_present
FROM
(
    SELECT loop_id, version AS v, present AS s_present, name AS s_name, started_parent AS s_started_parent, started_depth AS s_started_depth,
           started AS s_started, finished_outcome AS s_finished_outcome, finished_error AS s_finished_error, iterations AS s_iterations,
           subagents_spawned AS s_subagents_spawned, subagents_completed AS s_subagents_completed, subagents_failed AS s_subagents_failed,
           forked_from AS s_forked_from, forked_at_seq AS s_forked_at_seq, first_time_text AS s_first_time, last_time_text AS s_last_time,
           model_calls AS s_model_calls, input_tokens_sum AS s_input_tokens, output_tokens_sum AS s_output_tokens, model_cost AS s_model_cost,
           budget_cost AS s_budget_cost, unverified_model_cost AS s_unverified, children AS s_children
    FROM loop_summaries
    WHERE loop_id IN {loop_ids:Array(String)}
)
GROUP BY loop_id
HAVING is_present = 1
ORDER BY loop_id;
