/**
 * A mistake in what was asked: a command-line option or an API parameter the
 * reads cannot take. The CLI reports it in one line with exit code 2; `serve`
 * answers it with a 400 and that line.
 */
export class UsageError extends Error {
    name = 'UsageError';
}
//# sourceMappingURL=input.js.map