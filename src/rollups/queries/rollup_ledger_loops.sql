-- The loops whose reconciliation rows (loop_ledgers, loop_child_reports) may
-- have changed with rows ingested at or after `since` (Unix seconds): a new
-- ModelCalled, BudgetCharged, LoopFinished, SubAgentCompleted or ForkedFrom.
-- param: since UInt32 1764504000
SELECT DISTINCT loop_id
FROM envelopes
WHERE ingested_at >= toDateTime({since:UInt32})
  AND kind_class IN ('ModelCalled', 'BudgetCharged', 'LoopFinished', 'SubAgentCompleted', 'ForkedFrom');
