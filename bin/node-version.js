// The Node.js versions agentledger runs on (README "Node.js"; package.json
// `engines`): 22.12 and later. Plain JavaScript that any Node.js parses, so
// an older one gets this answer instead of a syntax or import error.

/** The oldest supported version, as [major, minor]. */
export const OLDEST = [22, 12];

/** Whether `version` (as in process.versions.node) is supported. */
export function supported(version) {
  const [major, minor] = version.split('.').map(Number);
  return major > OLDEST[0] || (major === OLDEST[0] && minor >= OLDEST[1]);
}
