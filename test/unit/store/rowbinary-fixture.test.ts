/**
 * test/fixtures/rowbinary/, which the chdb check reads back through current
 * ClickHouse (test/modern/check_sql.py step 6), is what the encoders write
 * now: a change of the encoders or of the declared columns without the
 * fixture written again (node dist/test/support/write-rowbinary-fixture.js)
 * fails here rather than leaving the modern check on stale bytes.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { FIXTURE_DIR, fixtureFiles } from '../../support/rowbinary-fixture.js';

test('the RowBinary fixture is what the encoders write now', () => {
  const want = fixtureFiles();
  assert.deepEqual(readdirSync(FIXTURE_DIR).sort(), [...want.keys()].sort());
  for (const [name, bytes] of want) {
    assert.ok(readFileSync(join(FIXTURE_DIR, name)).equals(bytes), `${name} differs: node dist/test/support/write-rowbinary-fixture.js writes it again`);
  }
});
