/**
 * The settings table of docs/configuration.md, generated from the
 * declarations (one section per service: variable, default, meaning).
 * `npm run docs:settings` (or `node dist/src/config/settings-table.js`
 * after a build) rewrites the part between the markers; a unit test fails
 * when the file differs from what this renders.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { z } from 'zod';
import { services } from './index.js';
export const BEGIN = '<!-- settings:begin -->';
export const END = '<!-- settings:end -->';
/** docs/configuration.md, from the compiled dist/src/config/. */
export const DOC_PATH = fileURLToPath(new URL('../../../docs/configuration.md', import.meta.url));
/** A cell's text with the characters a Markdown table would split or break on escaped. */
const cell = (text) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
function shownDefault(s) {
    if (s.schema instanceof z.ZodDefault) {
        const value = s.schema.def.defaultValue;
        const text = Array.isArray(value) ? value.join(',') : String(value);
        return `\`${text}\``;
    }
    return s.unset === undefined ? '(unset)' : `(unset: ${s.unset})`;
}
/** The generated part: one table per service, in the order the services are composed. */
export function renderSettingsTable() {
    const sections = services.map((svc) => {
        const rows = Object.entries(svc.vars).map(([key, s]) => `| \`${key}\` | ${cell(shownDefault(s))} | ${cell(s.doc)} |`);
        return [`### ${svc.title}`, '', '| variable | default | meaning |', '|---|---|---|', ...rows].join('\n');
    });
    return sections.join('\n\n');
}
/** `doc` with the text between the markers replaced by the generated table. */
export function withSettingsTable(doc) {
    const begin = doc.indexOf(BEGIN);
    const end = doc.indexOf(END);
    if (begin < 0 || end < begin)
        throw new Error(`${DOC_PATH}: no ${BEGIN} … ${END} markers`);
    return `${doc.slice(0, begin + BEGIN.length)}\n\n${renderSettingsTable()}\n\n${doc.slice(end)}`;
}
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
    const before = readFileSync(DOC_PATH, 'utf8');
    const after = withSettingsTable(before);
    if (after !== before)
        writeFileSync(DOC_PATH, after);
    console.log(after === before ? `${DOC_PATH}: up to date` : `${DOC_PATH}: settings table rewritten`);
}
//# sourceMappingURL=settings-table.js.map