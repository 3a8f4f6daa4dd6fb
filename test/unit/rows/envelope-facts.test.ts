/**
 * The one declaration of the envelope facts and their slots
 * (src/rows/envelope-facts.ts) against the migrations that made the columns
 * (0008 the facts, 0022 the slots and the facts as ALIAS columns over them):
 * the same names in the same order, with the same types, defaults and
 * expressions; the blank rows, the fold and its inverse, and the insert's
 * column list derived from it.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import {
  blankFacts, ENVELOPE_FACTS, ENVELOPE_SLOTS, FACT_DEFAULTS, FACT_NAMES, FACT_SLOTS, factSql, foldFacts, foldRow, NO_FACTS, NO_SLOTS, SLOT_NAMES,
  slotSql, uint64InSlot, unfoldSlots, type EnvelopeFacts,
} from '../../../src/rows/envelope-facts.js';
import { ENVELOPE_COLUMNS } from '../../../src/store/columns.js';

const migration = (file: string): string => readFileSync(new URL(`../../../../schema/clickhouse/${file}`, import.meta.url), 'utf8');
const MIGRATION = migration('0008_envelope_facts.sql');
const FOLDED = migration('0022_folded_facts.sql');

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

test("the insert names the slots in the declaration's order, between the envelope's columns and the Kafka ones", () => {
  const first = ENVELOPE_COLUMNS.indexOf(SLOT_NAMES[0]!);
  assert.deepEqual(ENVELOPE_COLUMNS.slice(first, first + SLOT_NAMES.length), SLOT_NAMES);
  assert.equal(ENVELOPE_COLUMNS[first - 1], 'evidence');
  assert.deepEqual(ENVELOPE_COLUMNS.slice(-4), ['kafka_topic', 'kafka_partition', 'kafka_offset', 'ingested_at']);
  assert.equal(new Set(ENVELOPE_COLUMNS).size, ENVELOPE_COLUMNS.length);
  for (const fact of FACT_NAMES) assert.ok(!(ENVELOPE_COLUMNS as string[]).includes(fact), `${fact} is an ALIAS column: an insert cannot name it`);
});

test('0022 adds every slot with the DEFAULT that computes it from the facts, per kind', () => {
  const adds = [...FOLDED.matchAll(/^ALTER TABLE envelopes ADD COLUMN (\w+) (\w+) DEFAULT (.+);$/gm)].map((m) => [m[1], m[2], m[3]]);
  assert.deepEqual(adds, SLOT_NAMES.map((slot) => [slot, ENVELOPE_SLOTS[slot], slotSql(slot)]));
  assert.equal(slotSql('n3'), "multiIf(kind_class = 'ModelCalled', toInt64(cost_pico), kind_class = 'BudgetCharged', toInt64(budget_pico), kind_class IN ('SubAgentCompleted', 'LoopFinished'), toInt64(spend_pico), toInt64(0))");
});

test('0022 then makes each slot DEFAULT a constant and each fact the ALIAS that reads its slot, in ALTERs of at most 24 facts', () => {
  const alters = [...FOLDED.matchAll(/^ALTER TABLE envelopes\n((?: {4}MODIFY COLUMN .+\n?)+?);$/gm)].map((m) => m[1]!.split(',\n'));
  assert.equal(alters.length, 2);
  // 18.16 refuses an ALTER that removes more than 50 files of a part (two per fact column).
  for (const a of alters) assert.ok(a.filter((c) => c.includes(' ALIAS ')).length <= 24);
  // The slots' constants come with the first facts turned: no DEFAULT is left naming a fact that is an ALIAS of it.
  assert.deepEqual(alters[0]!.slice(0, SLOT_NAMES.length), SLOT_NAMES.map((slot) => `    MODIFY COLUMN ${slot} ${ENVELOPE_SLOTS[slot]} DEFAULT ${ENVELOPE_SLOTS[slot] === 'String' ? "''" : 'toInt64(0)'}`));
  const aliases = alters.flat().slice(SLOT_NAMES.length);
  assert.deepEqual(aliases, FACT_NAMES.map((fact) => `    MODIFY COLUMN ${fact} ${ENVELOPE_FACTS[fact]} ALIAS ${factSql(fact)}`));
  assert.equal(factSql('fork_at_seq'), "if(kind_class = 'ForkedFrom', toUInt64(n1), toUInt64(0))");
  assert.equal(factSql('duration_ms'), "if(kind_class IN ('ModelCalled', 'ToolCalled'), n4, toInt64(0))");
});

test('every fact sits in one slot of its type class for every kind that carries it, and every slot kind is a kind the decoder classifies', () => {
  for (const [kind, slots] of Object.entries(FACT_SLOTS)) {
    for (const [slot, fact] of Object.entries(slots)) {
      const stringSlot = ENVELOPE_SLOTS[slot as keyof typeof ENVELOPE_SLOTS] === 'String';
      assert.equal(stringSlot, ENVELOPE_FACTS[fact] === 'String', `${kind}.${slot} holds ${fact}`);
    }
  }
  // factSql throws when a fact has two slots; every fact but none has one.
  for (const fact of FACT_NAMES) assert.match(factSql(fact), /^if\(kind_class/, fact);
});

/** A value at an edge of each fact's type, different per fact. */
function edgeFacts(): EnvelopeFacts {
  const f = blankFacts() as Record<string, string | number>;
  FACT_NAMES.forEach((name, i) => {
    const type = ENVELOPE_FACTS[name];
    f[name] = type === 'String' ? `${name}\t\\ ${i} é` : type === 'UInt8' ? 1 : type === 'UInt64' ? '18446744073709551615' : i % 2 ? '9223372036854775807' : '-9223372036854775808';
  });
  return f as EnvelopeFacts;
}

test("folding a kind's facts into slots and reading them back gives its facts, every other fact at its default", () => {
  const all = edgeFacts();
  for (const kind of [...Object.keys(FACT_SLOTS), '', 'SomethingNew']) {
    const slots = foldFacts(kind, all);
    assert.deepEqual(Object.keys(slots), SLOT_NAMES);
    const carried = new Set<string>(Object.values((FACT_SLOTS as Record<string, Record<string, string>>)[kind] ?? {}));
    const want = { ...NO_FACTS } as Record<string, unknown>;
    for (const name of carried) want[name] = all[name as keyof EnvelopeFacts];
    assert.deepEqual(unfoldSlots(kind, slots), want, kind);
  }
  assert.deepEqual(foldFacts('SomethingNew', all), NO_SLOTS);
  assert.ok(Object.isFrozen(NO_SLOTS));
  // A UInt64 beyond Int64 rides as its two's complement, as toInt64 writes it in SQL.
  assert.equal(foldFacts('ForkedFrom', all).n1, '-1');
  assert.equal(uint64InSlot('9223372036854775807'), '9223372036854775807');
  assert.equal(uint64InSlot('9223372036854775808'), '-9223372036854775808');
  assert.equal(uint64InSlot('42'), '42');
});

test('foldRow: facts by name become the slots; a fact the kind cannot hold is refused, not dropped', () => {
  const row = foldRow({ loop_id: 'l', kind_class: 'ToolCalled', tool: 'bash', tool_is_error: 1, duration_ms: '12' });
  assert.deepEqual(row, { loop_id: 'l', kind_class: 'ToolCalled', ...NO_SLOTS, s1: 'bash', n1: '1', n4: '12' });
  assert.throws(() => foldRow({ kind_class: 'ModelCalled', cost_pico: '5', budget_pico: '7' }), /ModelCalled row has no slot for budget_pico/);
  assert.deepEqual(foldRow({ kind_class: 'ModelCalled', budget_pico: '0' }), { kind_class: 'ModelCalled', ...NO_SLOTS });
});
