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
function files(dir) {
    return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}
/** folder -> the other folders it imports from. */
function graph() {
    const edges = new Map();
    for (const file of files(SRC)) {
        const from = relative(SRC, file).split('/')[0];
        const targets = edges.get(from) ?? new Set();
        edges.set(from, targets);
        for (const m of readFileSync(file, 'utf8').matchAll(/from '(\.[^']+)'/g)) {
            const to = relative(SRC, join(file, '..', m[1])).split('/')[0];
            if (to !== from)
                targets.add(to);
        }
    }
    return edges;
}
test('folders import each other without a cycle', () => {
    const edges = graph();
    const state = new Map();
    const visit = (node, path) => {
        if (state.get(node) === 'done')
            return;
        assert.notEqual(state.get(node), 'visiting', `import cycle: ${[...path, node].join(' -> ')}`);
        state.set(node, 'visiting');
        for (const next of edges.get(node) ?? [])
            visit(next, [...path, node]);
        state.set(node, 'done');
    };
    for (const node of edges.keys())
        visit(node, []);
});
test('pure stages import only pure stages; the sink imports no stage before it', () => {
    const edges = graph();
    // rows/ holds the row shapes the stages fill and the sink writes: neutral, below both.
    const pure = new Set(['decode', 'verify', 'account', 'money', 'rows']);
    for (const stage of pure) {
        for (const to of edges.get(stage) ?? [])
            assert.ok(pure.has(to), `${stage}/ imports ${to}/`);
    }
    for (const to of edges.get('rows') ?? [])
        assert.fail(`rows/ imports ${to}/: it is the bottom of the graph`);
    for (const to of edges.get('sink') ?? [])
        assert.ok(['config', 'observability', 'money', 'rows'].includes(to), `sink/ imports ${to}/`);
    for (const to of edges.get('pipeline') ?? [])
        assert.ok(!['sources', 'ingest', 'cli', 'jobs', 'sink'].includes(to), `pipeline/ imports ${to}/`);
    // sources/ are the Kafka and file adapters below the ingest core.
    for (const to of edges.get('sources') ?? [])
        assert.ok(!['ingest', 'cli'].includes(to), `sources/ imports ${to}/`);
});
//# sourceMappingURL=layout.test.js.map