/**
 * Where the generated month ends: a module of its own, free of the bench's
 * command line, so that the load (data.ts) can be built by a test too
 * (test/integration/dashboard-memory.test.ts).
 */

/** The data ends here (exclusive), a fixed date so every run loads the same rows; reads are relative to it. */
export const END_UNIX = Date.UTC(2026, 10, 1) / 1000;
export const END = `toDateTime('2026-11-01 00:00:00', 'UTC')`;
