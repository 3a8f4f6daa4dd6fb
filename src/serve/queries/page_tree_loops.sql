-- The loops of one tree for the page (GET /api/tree): every loop the rollup
-- job's fold placed under root {root} (loop_roots; the root's own row
-- included), with its ancestors, and its own counted model calls and cost
-- from the committed rollups (spend_rollup_hour of that root, source
-- runtime). The caller adds subtree costs up along the ancestors, each loop
-- once, as the loop_tree view does. Cost is Decimal128 in two pieces.
-- param: root String 'loop-root'
SELECT loop_id, parent_loop_id, loop_name, ancestors, toString(own_calls) AS own_calls_text, decimal_text(own_cost) AS own_cost_text
FROM
(
    SELECT loop_id, parent_loop_id, loop_name, ancestors
    FROM loop_roots FINAL
    WHERE root_loop_id = {root:String}
) AS placed
ANY LEFT JOIN
(
    SELECT loop_id, sum(calls) AS own_calls, sum(cost_pico) AS own_cost
    FROM spend_rollup_hour
    WHERE source = 'runtime' AND root_loop_id = {root:String}
      AND (hour, version) IN (SELECT hour, max(version) FROM rollup_commits GROUP BY hour)
    GROUP BY loop_id
) AS own USING loop_id
ORDER BY loop_id;
