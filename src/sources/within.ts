/**
 * `promise`, or a rejection after `ms` (`<what>: no answer from <from> in
 * <ms> ms`): a request to a broker that went away mid-call can stay pending
 * for good, and one awaited while the buffer lock is held would stall the
 * consumer (seen when the broker restarts); BullMQ waits as long for a Redis
 * it never reached.
 */
export async function within<T>(promise: Promise<T>, ms: number, what: string, from = 'Kafka'): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: no answer from ${from} in ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
