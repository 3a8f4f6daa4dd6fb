-- runtime_loop_rows.sql for the loops {loop_ids} only: the same columns and
-- rules, with the views it reads (runtime_loops, runtime_spend, loop_forks,
-- migration 0009) written out so that `loop_id IN {loop_ids}` stands inside
-- each `envelopes FINAL` and the primary key finds the loops' ranges: 18.16
-- does not reliably push a predicate into a view. A loop's row depends on its
-- own envelopes only, so any chunk of loops reads the rows the whole read
-- would give them (test/integration/loops-read.test.ts compares the two).
-- param: loop_ids Array(String) ['loop-a', 'loop-b']
SELECT loop_id, name, started_parent, started_depth, started, finished_outcome, finished_error,
       iterations, subagents_spawned, subagents_completed, subagents_failed, forked_from, forked_at_seq,
       toString(first_time) AS first_time_text, toString(last_time) AS last_time_text,
       model_calls, input_tokens_sum, output_tokens_sum, model_cost, budget_cost, unverified_model_cost
FROM
(
    SELECT
        loop_id,
        argMaxIf(loop_name, seq, kind_class = 'LoopStarted') AS name,
        argMaxIf(parent_loop_id, seq, kind_class = 'LoopStarted') AS started_parent,
        argMaxIf(depth, seq, kind_class = 'LoopStarted') AS started_depth,
        countIf(kind_class = 'LoopStarted') > 0 AS started,
        argMaxIf(outcome, seq, kind_class = 'LoopFinished') AS finished_outcome,
        argMaxIf(error, seq, kind_class = 'LoopFinished') AS finished_error,
        countIf(kind_class = 'IterationStarted' AND seq > replayed_to) AS iterations,
        countIf(kind_class = 'SubAgentSpawned' AND seq > replayed_to) AS subagents_spawned,
        countIf(kind_class = 'SubAgentCompleted' AND outcome = 'Completed' AND seq > replayed_to) AS subagents_completed,
        countIf(kind_class = 'SubAgentCompleted' AND outcome != 'Completed' AND seq > replayed_to) AS subagents_failed,
        argMaxIf(fork_source, seq, kind_class = 'ForkedFrom') AS forked_from,
        maxIf(fork_at_seq, kind_class = 'ForkedFrom') AS forked_at_seq,
        min(time) AS first_time,
        max(time) AS last_time
    FROM
    (
        SELECT loop_id, seq, time, kind_class, loop_name, parent_loop_id, depth, outcome, error, fork_source, fork_at_seq
        FROM envelopes FINAL
        WHERE loop_id IN {loop_ids:Array(String)} AND verdict NOT IN ('malformed', 'fork')
    ) AS own
    include(replayed_to_join)
    GROUP BY loop_id
) AS loops
ANY LEFT JOIN
(
    include(loop_spend_texts)
    FROM
    (
        include(loop_spend_sums)
        FROM
        (
            SELECT loop_id, kind_class, input_tokens, output_tokens, cost_pico, budget_pico,
                   verdict IN ('ok', 'gap', 'time_regression') AS verified,
                   seq <= replayed_to AS replayed
            FROM
            (
                SELECT loop_id, seq, kind_class, verdict, input_tokens, output_tokens, cost_pico, budget_pico
                FROM envelopes FINAL
                WHERE loop_id IN {loop_ids:Array(String)} AND kind_class IN ('ModelCalled', 'BudgetCharged') AND verdict != 'malformed'
            ) AS spend
            include(replayed_to_join)
        ) AS counted
        GROUP BY loop_id
    ) AS sums
) AS spend USING loop_id
ORDER BY loop_id;
