/**
 * The detail text of an alert condition, the line a notification shows:
 * bounded (MAX_DETAIL characters, MAX_ITEMS items listed) so a loop with ten
 * thousand warnings still makes a readable notification, with durations,
 * rates and amounts written for people (durations and rates rounded down,
 * USD exact). fire() and ok() make every condition a rule returns.
 */
import { picoToUsdText } from '../money/picodollars.js';
import type { AlertCondition, RuleId, Severity } from './condition.js';
import type { ConvergenceWarning } from './rule-rows.js';

const MAX_DETAIL = 1000;
const MAX_ITEMS = 5;
const MAX_ITEM = 160;

export function fire(rule: RuleId, subject: string, severity: Severity, detail: string): AlertCondition {
  return { rule, subject, firing: true, severity, detail: clip(detail, MAX_DETAIL) };
}

export function ok(rule: RuleId, subject: string, detail: string): AlertCondition {
  return { rule, subject, firing: false, severity: 'info', detail: clip(detail, MAX_DETAIL) };
}

/** Cuts text to `max` characters with an ellipsis, never between the halves of a surrogate pair. */
function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 1;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}…`;
}

/** The first MAX_ITEMS items, each clipped, and how many more there were. */
export function listed(items: readonly string[]): string {
  const shown = items.slice(0, MAX_ITEMS).map((i) => clip(i, MAX_ITEM));
  const more = items.length - shown.length;
  return more > 0 ? `${shown.join('; ')}; +${more} more` : shown.join('; ');
}

/**
 * Warnings grouped by (detector, reason), newest group first: a detector
 * repeating itself a hundred times is one line with its number, not a hundred.
 */
export function warningSummary(warnings: readonly ConvergenceWarning[]): string {
  const groups = new Map<string, { detector: string; reason: string; warnings: number; highest: number; latest: number }>();
  for (const w of warnings) {
    const key = JSON.stringify([w.detector, w.reason]);
    const g = groups.get(key) ?? { detector: w.detector, reason: w.reason, warnings: 0, highest: -Infinity, latest: -Infinity };
    groups.set(key, { ...g, warnings: g.warnings + 1, highest: Math.max(g.highest, w.count), latest: Math.max(g.latest, w.time) });
  }
  const sorted = [...groups.values()].sort((a, b) => b.latest - a.latest);
  return listed(sorted.map((g) => `${g.detector}: ${g.reason} (${g.warnings} warning(s), count up to ${g.highest})`));
}

/** `Failed 3, Stuck 1`: most frequent first, then by name, so the text is stable. */
export function counts(map: ReadonlyMap<string, number>): string {
  return [...map]
    .sort(([ka, a], [kb, b]) => b - a || (ka < kb ? -1 : ka > kb ? 1 : 0))
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
}

/** Parts per million as a percentage with up to 4 decimals, truncated: 250000 -> `25%`, 333333.3 -> `33.3333%`. */
export function percent(ppm: number): string {
  const units = Math.floor(ppm);
  const whole = Math.floor(units / 10_000);
  const frac = String(units % 10_000).padStart(4, '0').replace(/0+$/, '');
  return frac === '' ? `${whole}%` : `${whole}.${frac}%`;
}

/** `90 s`, `15 min`, `25 h`: detail text only, rounded down. */
export function duration(ms: number): string {
  if (ms < 60_000) return `${Math.floor(ms / 1000)} s`;
  if (ms < 7_200_000) return `${Math.floor(ms / 60_000)} min`;
  return `${Math.floor(ms / 3_600_000)} h`;
}

/** Exact USD text of picodollars, trailing zeros dropped down to cents: `12.50`, `0.000123`, `1.000000000001`. */
export function usd(pico: bigint): string {
  return picoToUsdText(pico).replace(/(\.\d\d\d*?)0+$/, '$1');
}
