/** Writes test/fixtures/rowbinary/ from the encoders (rowbinary-fixture.ts). */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURE_DIR, fixtureFiles } from './rowbinary-fixture.js';

mkdirSync(FIXTURE_DIR, { recursive: true });
for (const [name, bytes] of fixtureFiles()) writeFileSync(join(FIXTURE_DIR, name), bytes);
console.log(`${FIXTURE_DIR}: written`);
