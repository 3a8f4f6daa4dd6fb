// The demo traffic generator: deterministic loop-runtime records from a seed, the verdicts they must get,
// the bad records the decoder must reject, and JSONL files of them. Import from here; the other files are its parts.
export { generateTraffic } from './generate.js';
export { writeTrafficJsonl } from './jsonl.js';
export { malformedRecords } from './malformed.js';
export { mulberry32 } from './prng.js';
export { formatRfc3339Nano, parseUtcNanos } from './time.js';
export { defaultViolationPlan } from './types.js';
export { generateSpendTraffic } from './spend-generate.js';
export { usdTextToPicoExact } from './spend-expected.js';
//# sourceMappingURL=index.js.map