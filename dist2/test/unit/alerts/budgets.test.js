/**
 * The budgets file of the `spend_budget` rule (src/alerts/budgets.ts): every
 * refusal is one line naming the setting, the file and the JSON path; amounts
 * become picodollars exactly, from a picodollar up to Int64; the daily budget
 * is keyed by the UTC day of `now`, at midnight's edges; budgetSpend reads
 * only the kinds that have budgets, over the right hours, and puts the two
 * halves of a sum back together exactly.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { budgetsAt, budgetSpend, loadBudgets, parseBudgets } from '../../../src/alerts/budgets.js';
const SOURCE = '/etc/agentledger/budgets.json';
/** The message parseBudgets throws for `text`; fails when it does not throw. */
function refusal(text, source = SOURCE) {
    try {
        parseBudgets(text, source);
    }
    catch (err) {
        assert.ok(err instanceof Error);
        return err.message;
    }
    return assert.fail(`accepted: ${text}`);
}
/** Refused with one line that starts with the setting and the file, names `path` and says `what`. */
function assertRefused(text, path, what) {
    const message = refusal(text);
    assert.ok(!/[\r\n\u2028\u2029]/.test(message), `one line: ${JSON.stringify(message)}`);
    assert.ok(message.startsWith(`AGENTLEDGER_ALERT_BUDGETS_FILE (${SOURCE}): ${path}: `), message);
    assert.match(message, what);
}
const picoOf = (amount) => parseBudgets(JSON.stringify({ daily: amount }), SOURCE).dailyPico;
test('amounts become picodollars exactly, strings and safe integers alike, never through a float', () => {
    assert.equal(picoOf('0.000000000001'), 1n);
    assert.equal(picoOf('12.5'), 12500000000000n);
    assert.equal(picoOf('12.50'), 12500000000000n);
    assert.equal(picoOf('0'), 0n);
    assert.equal(picoOf(0), 0n);
    assert.equal(picoOf(500), 500000000000000n);
    // 0.1 + 0.2 in float64 is 0.30000000000000004: the string is read digit by digit.
    assert.equal(picoOf('0.3'), 300000000000n);
    assert.equal(picoOf('0.999999999999'), 999999999999n);
    // The largest budget: Int64 picodollars, to the picodollar.
    assert.equal(picoOf('9223372.036854775807'), 2n ** 63n - 1n);
    assert.equal(picoOf(9_223_372), 9223372000000000000n);
});
test('a whole file: every scope a Map of picodollars, absent scopes empty', () => {
    const b = parseBudgets('{"daily": "500", "roots": {"loop-1": "20", "loop-2": 3}, "names": {"triage": "100.000000000001"}, "projects": {"/home/dev/src/shop": "50", "__proto__": "1"}}', SOURCE);
    assert.equal(b.dailyPico, 500000000000000n);
    assert.deepEqual([...b.roots], [['loop-1', 20000000000000n], ['loop-2', 3000000000000n]]);
    assert.deepEqual([...b.names], [['triage', 100000000000001n]]);
    // `__proto__` is a key like any other (a project directory may be named so), not dropped.
    assert.deepEqual([...b.projects], [['/home/dev/src/shop', 50000000000000n], ['__proto__', 1000000000000n]]);
    const empty = parseBudgets('{}', SOURCE);
    assert.equal(empty.dailyPico, undefined);
    assert.equal(empty.roots.size + empty.names.size + empty.projects.size, 0);
    assert.deepEqual(budgetsAt(empty, Date.UTC(2026, 0, 1)), []);
});
test('text that is not JSON, or not an object, is refused in one line', () => {
    const notJson = refusal('{"daily": "5",\n  "roots": }');
    assert.ok(notJson.startsWith(`AGENTLEDGER_ALERT_BUDGETS_FILE (${SOURCE}): not JSON: `), notJson);
    assert.ok(!/[\r\n]/.test(notJson), notJson);
    assert.match(refusal(''), /: not JSON: /);
    assertRefused('[]', '(top level)', /expected a JSON object/);
    assertRefused('"500"', '(top level)', /expected a JSON object/);
    assertRefused('null', '(top level)', /expected a JSON object/);
});
test('unknown keys are refused, by name', () => {
    assertRefused('{"daily": "5", "weekly": "30"}', '(top level)', /unknown key\(s\) "weekly" \(known: daily, roots, names, projects\)/);
    assertRefused('{"Daily": "5"}', '(top level)', /"Daily"/);
});
test('scopes must be objects of non-empty keys', () => {
    assertRefused('{"roots": ["loop-1"]}', 'roots', /expected an object of root loop id -> USD amount/);
    assertRefused('{"names": "triage"}', 'names', /expected an object of loop name -> USD amount/);
    assertRefused('{"projects": null}', 'projects', /expected an object of project path -> USD amount/);
    assertRefused('{"roots": {"": "5"}}', 'roots[""]', /an empty root loop id is not a root loop id/);
    assertRefused('{"names": {"": "5"}}', 'names[""]', /an empty loop name/);
    assertRefused('{"projects": {"": "5"}}', 'projects[""]', /an empty project path/);
});
test('bad amounts are refused with their path and what to write instead', () => {
    assertRefused('{"daily": "-5"}', 'daily', /"-5" is negative/);
    assertRefused('{"daily": -5}', 'daily', /-5 is negative/);
    assertRefused('{"roots": {"loop-1": "0.0000000000001"}}', 'roots["loop-1"]', /more than 12 fraction digits/);
    assertRefused('{"names": {"triage": 1.5}}', 'names["triage"]', /1\.5 is a JSON number with a fraction, read through a float: write the amount as a decimal string/);
    assertRefused('{"daily": 1e-7}', 'daily', /JSON number with a fraction/);
    assertRefused('{"daily": "9223372.036854775808"}', 'daily', /above the largest budget, \$9223372\.036854775807/);
    assertRefused('{"daily": 9223373}', 'daily', /9223373 is above the largest budget/);
    assertRefused('{"daily": 1e300}', 'daily', /above the largest budget/);
    for (const text of ['"12."', '".5"', '"1e3"', '" 12"', '"12 USD"', '"$12"', '"0x10"', '""']) {
        assertRefused(`{"daily": ${text}}`, 'daily', /is not a USD amount: write a decimal string such as "12\.50"/);
    }
    assertRefused('{"daily": true}', 'daily', /expected a USD amount as a decimal string such as "12\.50", got boolean/);
    assertRefused('{"daily": null}', 'daily', /got null/);
    assertRefused('{"projects": {"/p": {"usd": "5"}}}', 'projects["/p"]', /got object/);
    assertRefused('{"roots": {"loop-1": ["5"]}}', 'roots["loop-1"]', /got an array/);
});
test('several problems: the first three in one line, and how many more', () => {
    const message = refusal(JSON.stringify({ daily: '-1', roots: { a: 'x', b: 'y', c: 'z', d: 'w' } }));
    assert.ok(!/[\r\n]/.test(message));
    assert.equal(message.split('; ').length, 4, message);
    assert.match(message, /^AGENTLEDGER_ALERT_BUDGETS_FILE \(.*\): daily: "-1" is negative.*; roots\["a"\]: .*; roots\["b"\]: .*; and 2 more$/);
});
test('a key or a file name with line breaks still gives one line', () => {
    const message = refusal('{"names": {"two\\nlines\\u2028here": "x"}}', '/tmp/odd\nname.json');
    assert.ok(!/[\r\n\u2028\u2029]/.test(message), JSON.stringify(message));
    assert.ok(message.startsWith('AGENTLEDGER_ALERT_BUDGETS_FILE (/tmp/odd\\u000aname.json): names["two\\nlines\\u2028here"]: '), message);
});
test('loadBudgets reads the file, and says in one line when it cannot', () => {
    const dir = mkdtempSync(join(tmpdir(), 'budgets-'));
    try {
        const file = join(dir, 'budgets.json');
        writeFileSync(file, '{"daily": "500", "roots": {"loop-1": "20"}}\n');
        const b = loadBudgets(file);
        assert.equal(b.dailyPico, 500000000000000n);
        assert.deepEqual([...b.roots], [['loop-1', 20000000000000n]]);
        writeFileSync(file, '{"daily": 1.25}');
        assert.throws(() => loadBudgets(file), { message: `AGENTLEDGER_ALERT_BUDGETS_FILE (${file}): daily: 1.25 is a JSON number with a fraction, read through a float: write the amount as a decimal string such as "12.50"` });
        const missing = join(dir, 'missing.json');
        assert.throws(() => loadBudgets(missing), (err) => {
            assert.ok(err instanceof Error);
            assert.ok(err.message.startsWith(`AGENTLEDGER_ALERT_BUDGETS_FILE (${missing}): cannot read it: `), err.message);
            assert.match(err.message, /ENOENT/);
            assert.ok(!/[\r\n]/.test(err.message));
            return true;
        });
        assert.throws(() => loadBudgets(dir), /AGENTLEDGER_ALERT_BUDGETS_FILE \(.*\): cannot read it: .*EISDIR/);
    }
    finally {
        rmSync(dir, { recursive: true, force: true });
    }
});
test('budgetsAt: every scope\'s budget, the daily one keyed by the UTC day of now, at midnight\'s edges', () => {
    const budgets = parseBudgets(JSON.stringify({ daily: '500', roots: { 'loop-1': '20' }, names: { triage: '100' }, projects: { '/home/dev/src/shop': '50' } }), SOURCE);
    const midnight = Date.UTC(2026, 2, 1);
    const at = (now) => budgetsAt(budgets, now).map((b) => `${b.kind}:${b.key} ${b.limitPico}`);
    const rest = ['root:loop-1 20000000000000', 'name:triage 100000000000000', 'project:/home/dev/src/shop 50000000000000'];
    // The last millisecond of February (2026 is no leap year), then midnight itself.
    assert.deepEqual(at(midnight - 1), ['day:2026-02-28 500000000000000', ...rest]);
    assert.deepEqual(at(midnight), ['day:2026-03-01 500000000000000', ...rest]);
    assert.deepEqual(at(midnight + 86_400_000 - 1), ['day:2026-03-01 500000000000000', ...rest]);
    assert.deepEqual(at(Date.UTC(2024, 1, 29, 23, 59, 59, 999)), ['day:2024-02-29 500000000000000', ...rest]);
    // Without a daily budget, no day subject at all.
    assert.deepEqual(budgetsAt({ ...budgets, dailyPico: undefined }, midnight).map((b) => b.kind), ['root', 'name', 'project']);
});
/** A ClickHouse client that records each query and answers it with `answer(sql)`'s rows. */
function fakeClickHouse(answer) {
    const seen = [];
    const ch = {
        query: ({ query }) => {
            seen.push(query);
            return Promise.resolve({ json: () => Promise.resolve(answer(query)) });
        },
    };
    return { ch, seen };
}
test('budgetSpend: no budgets, no query; one kind, only its query; the text of the sum read exactly past 2^64', async () => {
    const none = fakeClickHouse(() => assert.fail('no query expected'));
    assert.deepEqual(await budgetSpend(none.ch, [], Date.UTC(2026, 2, 10, 12, 30)), []);
    assert.deepEqual(none.seen, []);
    const roots = fakeClickHouse(() => [{ scope_key: 'loop-1', cost_text: '1080999999999999999999' }]);
    const spend = await budgetSpend(roots.ch, [
        { kind: 'root', key: 'loop-1', limitPico: 1n },
        { kind: 'root', key: 'loop-2', limitPico: 1n },
        { kind: 'root', key: 'loop-1', limitPico: 5n },
    ], Date.UTC(2026, 2, 10, 12, 30));
    assert.deepEqual(spend, [{ kind: 'root', key: 'loop-1', spentPico: 1080999999999999999999n }]);
    assert.equal(roots.seen.length, 1);
    // Each key once, in the IN list of the roots query.
    assert.match(roots.seen[0], /root_loop_id IN \('loop-1', 'loop-2'\)/);
});
test('budgetSpend: per-day scopes read from UTC midnight through now; a day key its own whole day', async () => {
    const now = Date.UTC(2026, 2, 10, 12, 30, 15, 500);
    const midnight = Date.UTC(2026, 2, 10) / 1000;
    const { ch, seen } = fakeClickHouse((sql) => (sql.includes('scope_key') ? [] : [{ cost_text: '42' }]));
    const spend = await budgetSpend(ch, [
        { kind: 'day', key: '2026-03-10', limitPico: 0n },
        { kind: 'day', key: '2026-03-09', limitPico: 0n },
        { kind: 'name', key: 'triage', limitPico: 0n },
        { kind: 'project', key: '/home/dev/src/shop', limitPico: 0n },
    ], now);
    assert.deepEqual(spend, [
        { kind: 'day', key: '2026-03-10', spentPico: 42n },
        { kind: 'day', key: '2026-03-09', spentPico: 42n },
    ]);
    const ranges = seen.map((sql) => [...sql.matchAll(/toDateTime\((\d+)\)/g)].map((m) => Number(m[1])));
    const today = [midnight, Math.floor(now / 1000)];
    assert.equal(seen.length, 4);
    assert.deepEqual(new Set(ranges[0]), new Set(today), 'today: midnight through now');
    assert.deepEqual(new Set(ranges[1]), new Set([midnight - 86_400, midnight - 1]), 'the day before: all of it');
    assert.match(seen[2], /loop_name IN \('triage'\)/);
    assert.deepEqual(new Set(ranges[2]), new Set(today));
    assert.match(seen[3], /HAVING scope_key IN \('\/home\/dev\/src\/shop'\)/);
    assert.deepEqual(new Set(ranges[3]), new Set(today));
    await assert.rejects(budgetSpend(ch, [{ kind: 'day', key: '10/03/2026', limitPico: 0n }], now), /"10\/03\/2026" is not a UTC day/);
});
//# sourceMappingURL=budgets.test.js.map