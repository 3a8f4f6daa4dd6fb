/**
 * The CLI as tests run it: bin/agentledger.js does the same from dist/, this
 * runs the build the test itself belongs to (a build in another folder tests
 * its own CLI, not whatever is in dist/).
 */
import { main } from '../../src/cli/main.js';
process.exitCode = await main(process.argv.slice(2));
//# sourceMappingURL=cli-entry.js.map