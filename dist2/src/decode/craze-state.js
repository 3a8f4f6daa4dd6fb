/**
 * The `state` event's sections: what the session shows (title, mode, model,
 * config, commands, plugins, the slash catalog, send-now) and the `usage`
 * report, which is money: its integers are int64, put in exact by
 * craze.ts (overlayExactIntegers) before this schema reads them.
 */
import { z } from 'zod';
import { bool, effort, int64, isObject, maxLen, nonNegative, smallInt, str } from './craze-fields.js';
/** A plugin's command: a `state.plugins` row, and the `command` event's pluginCommand. */
export const pluginCommandSchema = z.object({
    plugin: str,
    bare: str,
    display: str,
    qualified: str,
    description: str,
    kind: str,
});
/**
 * The integers of a `spend` section, in the order reports and rollups list
 * them: read exactly here, measured one by one by account/craze-spend.ts.
 * `reasoning` is part of `output`; `costPicoUsd` is the priced part's
 * picodollars, a floor when `unpriced`.
 */
export const SPEND_FIELDS = ['input', 'output', 'reasoning', 'cacheRead', 'cacheCreation', 'costPicoUsd'];
/** Every key required, as craze always writes them. */
const spendSchema = z.object({
    ...Object.fromEntries(SPEND_FIELDS.map((f) => [f, int64])),
    unpriced: z.boolean(),
});
const usageSchema = z.object({
    contextTokens: int64,
    contextWindow: int64,
    turn: spendSchema,
    session: spendSchema,
});
const catalogModelSchema = z.object({
    id: maxLen(256),
    name: maxLen(128),
    /** 0 when absent (a model not remembered). */
    recent: smallInt.refine((n) => n >= 1, 'must be >= 1').default(0),
    efforts: z.array(effort).max(8, 'at most 8 efforts').default([]),
    defaultEffort: effort.default(''),
    switchEffort: effort.default(''),
});
const catalogSchema = z.object({
    models: z.array(catalogModelSchema).max(512, 'at most 512 models').default([]),
    revision: nonNegative,
});
const selectValueSchema = z.object({ value: str, name: str });
const configOptionSchema = z.object({
    id: str,
    name: str,
    category: str,
    type: str,
    current: str,
    selectValues: z.array(selectValueSchema).default([]),
});
const configSchema = z.object({ options: z.array(configOptionSchema).default([]) });
const commandInfoSchema = z.object({ name: str, description: str });
const commandsSchema = z.object({ commands: z.array(commandInfoSchema).default([]) });
const pluginsSchema = z.object({ plugins: z.array(pluginCommandSchema).default([]) });
const slashSettingSchema = z.object({ kind: str, value: str });
const slashRunSchema = z.object({
    kind: z.string(),
    method: str,
    param: str,
    setting: slashSettingSchema.optional(),
    arg: str,
    argHint: str,
    picker: str,
    local: str,
    reason: str,
});
const slashItemSchema = z.object({
    name: z.string().min(1),
    description: str,
    source: str,
    plugin: str,
    qualified: str,
    requires: str,
    whileWorking: bool,
    run: slashRunSchema.optional(),
});
/** No whitespace and no control character. */
const ONE_TOKEN = /^[^\s\p{Cc}]+$/u;
/** Row by row: a bad row is dropped alone, never the section or the event. */
const slashSchema = z.unknown().transform((v) => {
    const rows = isObject(v) && Array.isArray(v.items) ? v.items : [];
    const items = [];
    for (const row of rows) {
        const r = slashItemSchema.safeParse(row);
        if (r.success && ONE_TOKEN.test(r.data.name))
            items.push(r.data);
    }
    return { items };
});
const sendNowSchema = z.object({ armed: bool, text: str, fromRow: str, turn: str });
export const stateSchema = z.object({
    /** A section absent from the delta was not touched: undefined, not ''. */
    title: z.string().optional(),
    mode: z.string().optional(),
    model: z.string().optional(),
    config: configSchema.optional(),
    commands: commandsSchema.optional(),
    plugins: pluginsSchema.optional(),
    slash: slashSchema.optional(),
    sendNow: sendNowSchema.optional(),
    usage: usageSchema.optional(),
    // A catalog that breaks the schema's limits (a newer craze listing more
    // models, say) is dropped alone: the usage report in the same state delta
    // is money and must not be lost with it.
    catalog: catalogSchema.optional().catch(undefined),
    reason: str,
    detail: str,
    indexErr: str,
});
//# sourceMappingURL=craze-state.js.map