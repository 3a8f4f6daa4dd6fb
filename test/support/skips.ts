/**
 * Skips that depend on the machine: a tool (Go, Java) or a service (the local
 * cluster, the local stack's files) that is not there. A developer's machine
 * may lack them and still run the rest; CI must not pass by running less, so
 * under CI=true such a test runs, and fails on what is missing.
 */

export const ON_CI = process.env['CI'] === 'true';

/** The `skip` option of a test that needs something the machine may lack: `reason` off CI, no skip on CI. */
export function machineSkip(reason: string | false | undefined): string | false {
  return ON_CI ? false : (reason ?? false) || false;
}
