/**
 * The one declaration of the envelope facts (src/rows/envelope-facts.ts)
 * against the migration that made the columns (0008): the same names in the
 * same order, with the same types and defaults, on envelopes and on its probe
 * twin; and the blank row and the insert's column list derived from it.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { blankFacts, ENVELOPE_FACTS, FACT_DEFAULTS, FACT_NAMES, NO_FACTS } from '../../../src/rows/envelope-facts.js';
import { ENVELOPE_COLUMNS } from '../../../src/sink/clickhouse/columns.js';

const MIGRATION = readFileSync(new URL('../../../../schema/clickhouse/0008_envelope_facts.sql', import.meta.url), 'utf8');

/** name, type and default of each ADD COLUMN of `table` in 0008, in order. */
function added(table: string): [string, string, string][] {
  const re = new RegExp(`^ALTER TABLE ${table} ADD COLUMN (\\w+) (\\w+) DEFAULT (.+);$`, 'gm');
  return [...MIGRATION.matchAll(re)].map((m) => [m[1]!, m[2]!, m[3]!]);
}

/** A default as the migration writes it: '' for a string, the digits otherwise. */
const sqlDefault = (value: string | number): string => (value === '' ? "''" : String(value));

test('every fact is declared once, as migration 0008 made it, on envelopes and envelopes_probe', () => {
  const declared = FACT_NAMES.map((name) => [name, ENVELOPE_FACTS[name], sqlDefault(FACT_DEFAULTS[ENVELOPE_FACTS[name]])]);
  assert.equal(declared.length, 34);
  assert.deepEqual(added('envelopes'), declared);
  assert.deepEqual(added('envelopes_probe'), declared);
});

test('blankFacts(): a fresh object of every fact at its default', () => {
  const a = blankFacts();
  const b = blankFacts();
  assert.notEqual(a, b);
  assert.deepEqual(Object.keys(a), FACT_NAMES);
  for (const name of FACT_NAMES) assert.equal(a[name], FACT_DEFAULTS[ENVELOPE_FACTS[name]], name);
  a.model_name = 'changed';
  assert.equal(b.model_name, '');
  assert.equal(NO_FACTS.model_name, '');
  assert.ok(Object.isFrozen(NO_FACTS));
});

test("the insert names the facts in the declaration's order, between the envelope's columns and the Kafka ones", () => {
  const first = ENVELOPE_COLUMNS.indexOf(FACT_NAMES[0]!);
  assert.deepEqual(ENVELOPE_COLUMNS.slice(first, first + FACT_NAMES.length), FACT_NAMES);
  assert.equal(ENVELOPE_COLUMNS[first - 1], 'evidence');
  assert.deepEqual(ENVELOPE_COLUMNS.slice(-4), ['kafka_topic', 'kafka_partition', 'kafka_offset', 'ingested_at']);
  assert.equal(new Set(ENVELOPE_COLUMNS).size, ENVELOPE_COLUMNS.length);
});
