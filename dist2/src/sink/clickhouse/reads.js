import { queryRows } from './sql.js';
/** The server's version text, e.g. `18.16.1` or `25.8.2.1`. */
export async function serverVersion(ch) {
    const [row] = await queryRows(ch, 'server_version');
    if (row === undefined)
        throw new Error('SELECT version() returned no row');
    return row.version;
}
/** The user's readonly setting: 0 may write, 1 or 2 may not (session_readonly.sql). */
export async function sessionReadonly(ch) {
    const [row] = await queryRows(ch, 'session_readonly');
    if (row === undefined)
        throw new Error('system.settings has no readonly setting');
    return Number(row.readonly);
}
/** This session's value of each setting named (session_settings.sql); a name the server does not know is missing. */
export async function sessionSettings(ch, names) {
    const rows = await queryRows(ch, 'session_settings', { names: [...names] });
    return new Map(rows.map((r) => [r.name, r.value]));
}
// src/read/loops.ts still imports the loop reads from here.
//# sourceMappingURL=reads.js.map