#!/usr/bin/env node
// Thin launcher: the CLI is compiled to dist/ by `npm run build`.
import { OLDEST, supported } from './node-version.js';

if (!supported(process.versions.node)) {
  process.stderr.write(
    `agentledger: Node.js ${process.versions.node} is not supported; use ${OLDEST.join('.')} or later, e.g. Node.js 24 LTS (infra/node.sh installs it into .state/node)\n`,
  );
  process.exit(1);
}
const { main } = await import('../dist/src/cli/main.js');
process.exitCode = await main(process.argv.slice(2));
