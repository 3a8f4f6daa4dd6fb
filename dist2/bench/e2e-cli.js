/**
 * `bin/agentledger.js` for a build in another folder: bin/ loads dist/, this
 * file loads the CLI compiled next to it. bench/e2e.sh runs it when given
 * `--dist DIR`, so a benchmark can run a build of its own (`tsc --outDir
 * DIR`) while dist/ belongs to someone else's test run.
 *
 *   node DIR/bench/e2e-cli.js <agentledger command> [options]
 */
import { main } from '../src/cli/main.js';
process.exitCode = await main(process.argv.slice(2));
//# sourceMappingURL=e2e-cli.js.map