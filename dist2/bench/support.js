/**
 * What the benchmark scripts share: option checks, the progress line, the
 * statistics of repeated runs. Figures only: nothing here asserts a time.
 */
/** `--name`'s text as a whole number >= 1; otherwise one line on stderr naming the option, and exit 2. */
export function wholeOption(bench, name, text) {
    const n = Number(text);
    if (!Number.isSafeInteger(n) || n < 1) {
        process.stderr.write(`${bench}: --${name} takes a whole number >= 1, not ${JSON.stringify(text ?? '')}\n`);
        process.exit(2);
    }
    return n;
}
/** The middle of the sorted values (the mean of the two middle ones for an even count); NaN for none. */
export function median(xs) {
    const s = [...xs].sort((a, b) => a - b);
    const mid = Math.floor(s.length / 2);
    return s.length === 0 ? NaN : s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}
/** Min, median and max of repeated runs. */
export function spread(xs) {
    return { min: Math.min(...xs), median: median(xs), max: Math.max(...xs) };
}
/** A progress printer: `[tag] line` on stdout (or stderr), optionally with the UTC time of day. */
export function sayer(tag, options = {}) {
    const stream = options.stream === 'stderr' ? process.stderr : process.stdout;
    return (line) => {
        const time = options.clock ? ` ${new Date().toISOString().slice(11, 19)}` : '';
        stream.write(`[${tag}${time}] ${line}\n`);
    };
}
//# sourceMappingURL=support.js.map