import { redactConfig } from '../config/index.js';
import { parseOptions } from './command.js';
export const configCommand = {
    name: 'config',
    summary: 'print the effective settings (passwords hidden)',
    help: `Usage: agentledger config [--json]

Prints the settings agentledger would run with: AGENTLEDGER_* environment
variables, then ./.env, then the defaults (which point at the local stack,
infra/stack.sh, and at docker-compose.yml). Every setting is documented in
docs/configuration.md. A wrong value stops every command with one line
naming the setting, the value and what is expected.`,
    run(args, { config, out }) {
        const { values } = parseOptions(args, { json: { type: 'boolean' } });
        const shown = redactConfig(config);
        out(values.json ? JSON.stringify(shown) : JSON.stringify(shown, null, 2));
        return Promise.resolve(0);
    },
};
//# sourceMappingURL=config.js.map