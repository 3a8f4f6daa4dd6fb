/**
 * craze outcomes (docs/input-contracts.md §2): what one codec event says, on its own, about a
 * turn, a sub-agent, a tool call, an ask, a compaction or an error.
 *
 * Per event only, pure, no state: these are the values each craze_events row
 * carries. Counting them — a turn once by its last ending, a sub-agent by its
 * last `finished` row or else abandoned, replayed and agent-scoped events
 * excluded — is done over the deduplicated rows by the views of
 * schema/clickhouse/0004_craze_views.sql, so a redelivery or a restart can
 * never count anything twice. `CrazeOutcomeEvent` is the minimal shape read
 * here, which the decoder's events fit as they are.
 */
const CANCEL_STOP_REASONS = new Set(['cancelled', 'closing']);
/**
 * Error classes that are a cancel, not a failure: a prompt withdrawn before it
 * was sent (`prompt_cancelled`, which craze writes beside stop reason
 * `cancelled`) and the prompt caller's own context cancelled (`canceled`).
 */
const CANCEL_ERR_CLASSES = new Set(['prompt_cancelled', 'canceled']);
/**
 * A turn ending's outcome. A cancel wins over the error a cancelled ending
 * may carry: craze's own synthetic ending of a withdrawn prompt is
 * `{stopReason:"cancelled", errClass:"prompt_cancelled", err:…}`, and
 * protocol.md's `lastTurn.outcome` calls that `cancelled`.
 */
export function classifyTurnEnding(turn) {
    const stopReason = turn.stopReason ?? '';
    const errClass = turn.errClass ?? '';
    if (CANCEL_STOP_REASONS.has(stopReason) || CANCEL_ERR_CLASSES.has(errClass))
        return 'cancelled';
    if (errClass !== '' || (turn.err ?? '') !== '')
        return 'failed';
    return 'done';
}
/** The outcome values one event carries on its own. */
export function crazeEventOutcome(e) {
    const out = {};
    if (e.type === 'turn' && e.turn?.phase === 'ended') {
        out.turn = { id: e.turn.id ?? '', outcome: classifyTurnEnding(e.turn), synthetic: e.turn.synthetic === true, errClass: e.turn.errClass ?? '' };
    }
    if (e.type === 'subagent' && e.subagent) {
        out.subagent = { id: e.subagent.id ?? '', attemptId: e.subagent.attemptId ?? '', change: e.subagentChange ?? '', status: e.subagent.status ?? '' };
    }
    if (e.type === 'tool' && e.tool) {
        out.tool = { name: e.tool.name ?? '', kind: e.tool.kind ?? '', status: e.tool.status ?? '', exitCode: e.tool.output?.exitCode };
    }
    if (e.type === 'ask' && e.ask) {
        out.ask = { kind: e.ask.kind ?? '', outcome: e.ask.outcome ?? '', by: e.ask.by ?? '' };
    }
    if (e.type === 'compaction' && e.compaction) {
        const c = e.compaction;
        out.compaction = { phase: c.phase ?? '', reason: c.reason ?? '', tokensBefore: c.tokensBefore ?? 0, tokensAfter: c.tokensAfter ?? 0 };
    }
    if (e.err)
        out.error = { class: e.err.class ?? '', code: e.err.code ?? 0 };
    return out;
}
//# sourceMappingURL=craze-outcomes.js.map