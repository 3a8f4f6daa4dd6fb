/** Option checks the benchmark scripts share. */

/** `--name`'s text as a whole number >= 1; otherwise one line on stderr naming the option, and exit 2. */
export function wholeOption(bench: string, name: string, text: string | undefined): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 1) {
    process.stderr.write(`${bench}: --${name} takes a whole number >= 1, not ${JSON.stringify(text ?? '')}\n`);
    process.exit(2);
  }
  return n;
}
