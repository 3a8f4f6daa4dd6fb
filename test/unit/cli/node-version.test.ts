/**
 * bin/node-version.js: the launcher's answer to an unsupported Node.js, and
 * the same oldest version as package.json's `engines` and infra/node.sh.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

interface NodeVersion {
  readonly OLDEST: readonly [number, number];
  supported(version: string): boolean;
}

test('Node.js 22.12 and later are supported, 20 and 22 before 22.12 are not; engines and infra/node.sh agree', async () => {
  // bin/ is plain JavaScript outside the TypeScript build: imported by its path.
  const { OLDEST, supported } = (await import(pathToFileURL(`${ROOT}bin/node-version.js`).href)) as NodeVersion;
  for (const v of ['24.21.0', '22.23.3', '22.12.0', '23.0.0', '26.1.0']) assert.equal(supported(v), true, v);
  for (const v of ['20.20.2', '22.11.0', '18.19.0', '21.7.3']) assert.equal(supported(v), false, v);
  assert.equal(supported(process.versions.node), true, `the suite runs on a supported Node.js, not ${process.versions.node}`);
  const engines = (JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { engines: { node: string } }).engines.node;
  assert.equal(engines, `>=${OLDEST.join('.')}`);
  assert.match(readFileSync(`${ROOT}infra/node.sh`, 'utf8'), new RegExp(`AGENTLEDGER_NODE_MIN:-${OLDEST[0]}\\}`));
});
