/**
 * test/fixtures/rowbinary/: the hostile rows (hostile-rows.ts, the strings
 * short enough for the repository) of envelopes and craze_events as the two
 * insert formats write them, and each table's declared columns. The chdb
 * check (test/modern/check_sql.py, step 6) inserts both bodies into the
 * tables as current ClickHouse migrates them and reads every row back as
 * RowBinary, which must be the .rowbinary file byte for byte; a unit test
 * (test/unit/store/rowbinary-fixture.test.ts) holds the files to the
 * encoders, and `node dist/test/support/write-rowbinary-fixture.js` writes
 * them again after a change.
 */
import { fileURLToPath } from 'node:url';
import { CRAZE_TABLE, ENVELOPE_TABLE } from '../../src/store/columns.js';
import { encodeRows } from '../../src/store/insert-format.js';
import type { TableSpec } from '../../src/store/table-spec.js';
import { byOffset, crazeRows, envelopeRows, FIXTURE_STRINGS } from './hostile-rows.js';

/** test/fixtures/rowbinary/, from the compiled dist/test/support/. */
export const FIXTURE_DIR = fileURLToPath(new URL('../../../test/fixtures/rowbinary/', import.meta.url));

function files<Row>(table: string, spec: TableSpec<Row>, rows: readonly Row[]): [string, Buffer][] {
  const columns = spec.columns.map((name, i) => [name, spec.types[i]!]);
  return [
    [`${table}.json`, Buffer.from(`${JSON.stringify({ table, order: 'kafka_offset', columns }, null, 1)}\n`, 'utf8')],
    [`${table}.tsv`, Buffer.concat(encodeRows('TabSeparated', spec, rows))],
    [`${table}.rowbinary`, Buffer.concat(encodeRows('RowBinary', spec, rows))],
  ];
}

/** Every file of the fixture by name, as the encoders write it now. */
export function fixtureFiles(): Map<string, Buffer> {
  return new Map([
    ...files('envelopes', ENVELOPE_TABLE, byOffset(envelopeRows('fixture', FIXTURE_STRINGS))),
    ...files('craze_events', CRAZE_TABLE, byOffset(crazeRows('fixture', FIXTURE_STRINGS))),
  ]);
}
