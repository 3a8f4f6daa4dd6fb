/**
 * The shipped migrations as a test needs them: a copy of those up to a
 * version, to migrate a database to the layout of an older release.
 */
import { cp, mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MIGRATIONS_DIR } from '../../src/cli/migrate.js';
/** A temporary folder holding a copy of the shipped migrations up to version `last` (the caller removes it). */
export async function migrationsUpTo(last) {
    const dir = await mkdtemp(join(tmpdir(), 'mig-'));
    for (const file of await readdir(MIGRATIONS_DIR))
        if (Number(file.slice(0, 4)) <= last)
            await cp(join(MIGRATIONS_DIR, file), join(dir, file));
    return dir;
}
//# sourceMappingURL=migrations.js.map