/**
 * The budgets of the `spend_budget` rule (issue 11): a small JSON file named
 * by AGENTLEDGER_ALERT_BUDGETS_FILE, and the spend each budget is compared
 * with, read from the committed rollups.
 *
 * ```json
 * { "daily": "500", "roots": { "<root loop id>": "20" }, "names": { "<loop name>": "100" }, "projects": { "/home/dev/src/shop": "50" } }
 * ```
 *
 * - `daily`: every source's spend of the UTC day (subject `day:<YYYY-MM-DD>`);
 * - `roots`: a root loop's whole tree, all time (subject `root:<id>`); a craze
 *   session id names that session, its own root as in `spend --by root`;
 * - `names`: the loops of that LoopStarted name, per UTC day (`name:<name>`);
 * - `projects`: the craze sessions of that working directory, per UTC day
 *   (`project:<path>`).
 *
 * Amounts are USD, as decimal strings ("12.50", at most 12 fraction digits)
 * or non-negative integers, and become bigint picodollars without ever
 * passing through a float: a JSON number with a fraction is refused, since
 * JSON.parse has already rounded it.
 */
import { readFileSync } from 'node:fs';
import type { ClickHouseClient } from '@clickhouse/client';
import { z } from 'zod';
import { inListChunks, type SqlValue } from '../clickhouse/sql.js';
import { queryRows } from './queries.js';
import type { BudgetKind, SpendBudget, SpendRow } from './rule-rows.js';
import { failureMessage } from '../errors/errors.js';

/** The parsed budgets file; every amount in picodollars. */
export interface Budgets {
  /** Every source's spend per UTC day; undefined: no daily budget. */
  readonly dailyPico?: bigint;
  /** Per root loop id, its tree's spend over all time. */
  readonly roots: ReadonlyMap<string, bigint>;
  /** Per loop name, the spend of its loops per UTC day. */
  readonly names: ReadonlyMap<string, bigint>;
  /** Per craze project path (the sessions' cwd), their spend per UTC day. */
  readonly projects: ReadonlyMap<string, bigint>;
}

const SETTING = 'AGENTLEDGER_ALERT_BUDGETS_FILE';
const PICO_PER_USD = 1_000_000_000_000n;
/** The largest budget: Int64 picodollars ($9,223,372.036854775807); anything above is a typo, not a budget. */
const MAX_PICO = 2n ** 63n - 1n;

type AmountResult = { readonly ok: true; readonly pico: bigint } | { readonly ok: false; readonly reason: string };

/** A budget amount as the file gives it, in picodollars, or why it is not one. */
function amountPico(value: unknown): AmountResult {
  const refuse = (reason: string): AmountResult => ({ ok: false, reason });
  let pico: bigint;
  if (typeof value === 'string') {
    if (/^-\d/.test(value)) return refuse(`${JSON.stringify(value)} is negative: a budget is at least 0`);
    const m = /^(\d+)(?:\.(\d+))?$/.exec(value);
    if (!m) return refuse(`${JSON.stringify(value)} is not a USD amount: write a decimal string such as "12.50"`);
    const fraction = m[2] ?? '';
    if (fraction.length > 12) return refuse(`${JSON.stringify(value)} has more than 12 fraction digits (a picodollar is 0.000000000001)`);
    pico = BigInt(m[1]!) * PICO_PER_USD + BigInt(fraction.padEnd(12, '0'));
  } else if (typeof value === 'number') {
    if (!Number.isInteger(value)) return refuse(`${value} is a JSON number with a fraction, read through a float: write the amount as a decimal string such as "12.50"`);
    if (value < 0) return refuse(`${value} is negative: a budget is at least 0`);
    pico = BigInt(value) * PICO_PER_USD;
  } else {
    return refuse(`expected a USD amount as a decimal string such as "12.50", got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}`);
  }
  if (pico > MAX_PICO) return refuse(`${typeof value === 'string' ? JSON.stringify(value) : value} is above the largest budget, $9223372.036854775807 (Int64 picodollars)`);
  return { ok: true, pico };
}

const amount = z.unknown().transform((value, ctx) => {
  const r = amountPico(value);
  if (r.ok) return r.pico;
  ctx.addIssue({ code: 'custom', message: r.reason });
  return z.NEVER;
});

/**
 * One scope's budgets, `{ "<key>": amount }`, as a Map: a JSON object goes in
 * as its own entries, so a key such as `__proto__` is a key like any other
 * (a record schema would drop it without a word).
 */
const scope = (what: string) =>
  z.preprocess(
    (v) => (v !== null && typeof v === 'object' && !Array.isArray(v) ? new Map(Object.entries(v)) : v),
    z.map(z.string().min(1, `an empty ${what} is not a ${what}`), amount, { error: `expected an object of ${what} -> USD amount` }),
  );

const FILE_KEYS = ['daily', 'roots', 'names', 'projects'];

const fileSchema = z.strictObject(
  {
    daily: amount.optional(),
    roots: scope('root loop id').optional(),
    names: scope('loop name').optional(),
    projects: scope('project path').optional(),
  },
  {
    error: (issue) =>
      issue.code === 'unrecognized_keys'
        ? `unknown key(s) ${issue.keys.map((k) => JSON.stringify(k)).join(', ')} (known: ${FILE_KEYS.join(', ')})`
        : `expected a JSON object with any of ${FILE_KEYS.join(', ')}`,
  },
);

/** Where in the file: `daily`, `roots["loop-1"]`; the file itself is `(top level)`. */
function jsonPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(top level)';
  return path.map((p, i) => (i === 0 ? String(p) : `[${JSON.stringify(typeof p === 'symbol' ? p.toString() : p)}]`)).join('');
}

const breaksLine = (code: number): boolean => code < 0x20 || (code >= 0x7f && code <= 0x9f) || code === 0x2028 || code === 0x2029;

/** Control and line-separator characters escaped: the message stays one line whatever the file or its path hold. */
const oneLine = (text: string): string => Array.from(text, (c) => (breaksLine(c.charCodeAt(0)) ? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}` : c)).join('');

const MAX_ISSUES = 3;

function budgetsError(source: string, what: string): Error {
  return new Error(oneLine(`${SETTING} (${source}): ${what}`));
}

/**
 * The budgets of a file's text. Throws an Error with a one-line message
 * (`AGENTLEDGER_ALERT_BUDGETS_FILE (<source>): <path>: <what is wrong>`) for
 * text that is not JSON, a shape other than the documented one (unknown keys
 * included), an empty id, name or path, and an amount that is negative, finer
 * than a picodollar, a JSON number with a fraction, or above Int64
 * picodollars.
 */
export function parseBudgets(text: string, source: string): Budgets {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw budgetsError(source, `not JSON: ${failureMessage(err)}`);
  }
  const parsed = fileSchema.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues;
    const listed = issues.slice(0, MAX_ISSUES).map((i) => `${jsonPath(i.path)}: ${i.message}`);
    const more = issues.length > MAX_ISSUES ? `; and ${issues.length - MAX_ISSUES} more` : '';
    throw budgetsError(source, listed.join('; ') + more);
  }
  const { daily, roots, names, projects } = parsed.data;
  return { ...(daily === undefined ? {} : { dailyPico: daily }), roots: roots ?? new Map(), names: names ?? new Map(), projects: projects ?? new Map() };
}

/** The budgets of the file at `path`; an unreadable file throws the same one-line Error as a bad one. */
export function loadBudgets(path: string): Budgets {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw budgetsError(path, `cannot read it: ${failureMessage(err)}`);
  }
  return parseBudgets(text, path);
}

/** `YYYY-MM-DD` of the UTC day holding `ms`. */
const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

const inForce = (kind: BudgetKind, limits: ReadonlyMap<string, bigint>): SpendBudget[] => [...limits].map(([key, limitPico]) => ({ kind, key, limitPico }));

/** The budgets in force at `now` (Unix ms): the daily budget is that of now's UTC day (`day:<YYYY-MM-DD>`). */
export function budgetsAt(budgets: Budgets, now: number): SpendBudget[] {
  return [
    ...(budgets.dailyPico === undefined ? [] : [{ kind: 'day' as const, key: utcDay(now), limitPico: budgets.dailyPico }]),
    ...inForce('root', budgets.roots),
    ...inForce('name', budgets.names),
    ...inForce('project', budgets.projects),
  ];
}

/** A Decimal128 sum as the budget queries return it: its exact text (decimal_text() in the query). */
interface SumText {
  readonly cost_text: string;
}

const joined = (r: SumText): bigint => BigInt(r.cost_text);

const DAY_SECONDS = 86_400;

/** [UTC midnight, end] of a `YYYY-MM-DD` day in Unix seconds, cut at `now`: the hours a per-day scope reads. */
function dayRange(day: string, now: number): { since: number; until: number } {
  const since = /^\d{4}-\d{2}-\d{2}$/.test(day) ? Date.parse(`${day}T00:00:00Z`) / 1000 : NaN;
  if (!Number.isInteger(since)) throw new Error(`spend_budget: ${JSON.stringify(day)} is not a UTC day (YYYY-MM-DD)`);
  return { since, until: Math.min(since + DAY_SECONDS - 1, Math.floor(now / 1000)) };
}

/** A scope query's rows, a chunk of keys at a time (each chunk fits max_query_size), as SpendRows. */
async function perKey(ch: ClickHouseClient, kind: BudgetKind, query: string, keys: readonly string[], params: Record<string, SqlValue> = {}): Promise<SpendRow[]> {
  const out: SpendRow[] = [];
  for (const chunk of inListChunks(keys)) {
    const rows = await queryRows<SumText & { readonly scope_key: string }>(ch, query, { ...params, keys: chunk });
    out.push(...rows.map((r) => ({ kind, key: r.scope_key, spentPico: joined(r) })));
  }
  return out;
}

/**
 * The spend so far of each budgeted scope, in exact picodollars: `day` the
 * whole UTC day of its key, every source; `root` a tree (or a craze session)
 * over all time; `name` and `project` the UTC day of `now`. Only the kinds
 * that have budgets are read, and none when there are none.
 *
 * Read from the committed rollups (docs/spend.md "Rollups": each hour's highest
 * committed version of spend_rollup_model_hour and spend_rollup_root_hour),
 * never from `envelopes FINAL`, so a sweep stays well under a second at ten
 * million calls. What that costs:
 * - the rollups lag the raw tables by one rollup sweep (AGENTLEDGER_ROLLUP_SWEEP_MS,
 *   30 s): spend stored since the last sweep counts from the next one on, so a
 *   budget fires up to one sweep late;
 * - a per-day scope reads whole hours, from UTC midnight through the hour that
 *   holds `now`: a call stamped later in that hour (a producer clock ahead)
 *   counts too.
 * The rollups already count each call once: a fork's replays are its source's
 * money, a parent's child_spend is never added, unverified calls are left out.
 */
export async function budgetSpend(ch: ClickHouseClient, budgets: readonly SpendBudget[], now: number): Promise<SpendRow[]> {
  const keys = (kind: BudgetKind): string[] => [...new Set(budgets.filter((b) => b.kind === kind).map((b) => b.key))];
  const today = dayRange(utcDay(now), now);
  const reads: Promise<SpendRow[]>[] = [
    ...keys('day').map(async (day) => {
      const [row] = await queryRows<SumText>(ch, 'alert_budget_day', dayRange(day, now));
      return [{ kind: 'day' as const, key: day, spentPico: row === undefined ? 0n : joined(row) }];
    }),
    perKey(ch, 'root', 'alert_budget_roots', keys('root')),
    perKey(ch, 'name', 'alert_budget_names', keys('name'), today),
    perKey(ch, 'project', 'alert_budget_projects', keys('project'), today),
  ];
  return (await Promise.all(reads)).flat();
}
