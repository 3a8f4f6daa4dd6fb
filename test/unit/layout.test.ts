/**
 * The folders of src/ are the stages in data order (docs/architecture.md, "Architecture"):
 * imports between folders form no cycle, the pure stages import nothing that
 * does I/O, and the sink imports none of the stages before it.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const SRC = fileURLToPath(new URL('../../../src/', import.meta.url));

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

/** folder -> the other folders it imports from. */
function graph(): Map<string, Set<string>> {
  const edges = new Map<string, Set<string>>();
  for (const file of files(SRC)) {
    const from = relative(SRC, file).split('/')[0]!;
    const targets = edges.get(from) ?? new Set<string>();
    edges.set(from, targets);
    for (const m of readFileSync(file, 'utf8').matchAll(/from '(\.[^']+)'/g)) {
      const to = relative(SRC, join(file, '..', m[1]!)).split('/')[0]!;
      if (to !== from) targets.add(to);
    }
  }
  return edges;
}

test('folders import each other without a cycle', () => {
  const edges = graph();
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (node: string, path: string[]): void => {
    if (state.get(node) === 'done') return;
    assert.notEqual(state.get(node), 'visiting', `import cycle: ${[...path, node].join(' -> ')}`);
    state.set(node, 'visiting');
    for (const next of edges.get(node) ?? []) visit(next, [...path, node]);
    state.set(node, 'done');
  };
  for (const node of edges.keys()) visit(node, []);
});

test('pure stages import only pure stages; the sink imports no stage before it', () => {
  const edges = graph();
  // rows/ holds the row shapes the stages fill and the sink writes: neutral, below both.
  const pure = new Set(['decode', 'verify', 'account', 'money', 'rows']);
  for (const stage of pure) {
    for (const to of edges.get(stage) ?? []) assert.ok(pure.has(to), `${stage}/ imports ${to}/`);
  }
  for (const to of edges.get('rows') ?? []) assert.fail(`rows/ imports ${to}/: it is the bottom of the graph`);
  // errors/ is the taxonomy of failures every folder may throw and decide on: it imports nothing of agentledger.
  assert.ok(edges.has('errors'), 'src/errors/ exists');
  for (const to of edges.get('errors') ?? []) assert.fail(`errors/ imports ${to}/: it is the bottom of the graph`);
  // The sink: the ClickHouse client (clickhouse/) below the writers (store/) and the migrations (migrate/); none imports a stage before it.
  const sink = { clickhouse: [], store: ['clickhouse'], migrate: ['clickhouse'] } as const;
  for (const [folder, above] of Object.entries(sink)) {
    assert.ok(edges.has(folder), `src/${folder}/ exists`);
    for (const to of edges.get(folder) ?? []) assert.ok(['config', 'errors', 'observability', 'money', 'rows', ...above].includes(to), `${folder}/ imports ${to}/`);
  }
  for (const to of edges.get('pipeline') ?? []) assert.ok(!['sources', 'ingest', 'cli', 'jobs', ...Object.keys(sink)].includes(to), `pipeline/ imports ${to}/`);
  // kafka/ and sources/ are the Kafka and journal adapters below the ingest core.
  for (const adapter of ['kafka', 'sources']) {
    for (const to of edges.get(adapter) ?? []) assert.ok(!['ingest', 'cli', 'jobs', 'alerts', 'rollups'].includes(to), `${adapter}/ imports ${to}/`);
  }
});

test('kafkajs is imported by src/kafka/ alone: the day it is replaced, that folder is the change', () => {
  const importers = files(SRC).filter((file) => /from 'kafkajs(\/[^']*)?'|require\('kafkajs(\/[^']*)?'\)|import\('kafkajs/.test(readFileSync(file, 'utf8')));
  assert.ok(importers.length > 0, 'the adapter imports it');
  const outside = importers.filter((file) => relative(SRC, file).split('/')[0] !== 'kafka');
  assert.deepEqual(outside.map((file) => relative(SRC, file)), [], 'files outside src/kafka/ importing kafkajs');
});

/** A file of src/ as the failure messages name it: `src/rollups/rollups.ts`. */
const shown = (file: string): string => relative(join(SRC, '..'), file);

/**
 * Every `.ts` file of src/ -> the files of src/ it imports: `import`,
 * `import type`, `export … from`, a bare `import './x.js'` and a literal
 * `import('./x.js')` alike, since a cycle hidden behind a type-only or lazy
 * import is still two files that cannot be read, tested or moved apart.
 */
function fileGraph(): Map<string, string[]> {
  const all = new Set(files(SRC));
  const edges = new Map<string, string[]>();
  for (const file of all) {
    const targets = new Set<string>();
    for (const m of readFileSync(file, 'utf8').matchAll(/(?:\bfrom|\bimport\s*\(?)\s*['"](\.{1,2}\/[^'"]+)['"]/g)) {
      const to = join(file, '..', m[1]!).replace(/\.js$/, '.ts');
      if (all.has(to)) targets.add(to);
    }
    edges.set(file, [...targets].sort());
  }
  return edges;
}

/** The strongly connected components of more than one file, or of one file importing itself (Tarjan). */
function knots(edges: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const connect = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const next of edges.get(node) ?? []) {
      if (!index.has(next)) {
        connect(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || (edges.get(node) ?? []).includes(node)) found.push(component.sort());
  };
  for (const node of [...edges.keys()].sort()) if (!index.has(node)) connect(node);
  return found;
}

/** A shortest cycle through the first file of a knot, inside the knot (breadth first): its files, the first again last. */
function cycleIn(component: readonly string[], edges: ReadonlyMap<string, readonly string[]>): string[] {
  const start = component[0]!;
  const inside = new Set(component);
  const cameFrom = new Map<string, string>();
  const queue = [start];
  for (let i = 0; i < queue.length; i++) {
    const node = queue[i]!;
    for (const next of edges.get(node) ?? []) {
      if (next === start) {
        const path = [start];
        for (let at = node; at !== start; at = cameFrom.get(at)!) path.splice(1, 0, at);
        return [...path, start];
      }
      if (!inside.has(next) || cameFrom.has(next)) continue;
      cameFrom.set(next, node);
      queue.push(next);
    }
  }
  return [start, start];
}

test('files of src/ import each other without a cycle', () => {
  const edges = fileGraph();
  const found = knots(edges).map((component) => {
    const cycle = cycleIn(component, edges);
    const text = cycle.map(shown).join(' -> ');
    // A knot can hold more files than its first file's shortest cycle: all of them are named.
    return cycle.length - 1 < component.length ? `${text} (in a knot of ${component.length} files: ${component.map(shown).join(', ')})` : text;
  });
  assert.equal(found.length, 0, `import cycles, one per knot of files that import each other:\n  ${found.join('\n  ')}`);
});

/** Lines of a text as `wc -l` counts them for a file that ends in a newline. */
const lineCount = (text: string): number => text.split('\n').length - (text.endsWith('\n') ? 1 : 0);

const MAX_LINES = 400;

test(`no file of src/ is over ${MAX_LINES} lines`, () => {
  const all = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? all(join(dir, e.name)) : [join(dir, e.name)]));
  const long = all(SRC)
    .map((file) => ({ file, lines: lineCount(readFileSync(file, 'utf8')) }))
    .filter((f) => f.lines > MAX_LINES)
    .sort((a, b) => b.lines - a.lines);
  assert.equal(long.length, 0, `files over ${MAX_LINES} lines (split them by what they do):\n  ${long.map((f) => `${shown(f.file)}: ${f.lines} lines`).join('\n  ')}`);
});
