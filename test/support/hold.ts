/**
 * A write a test holds until the ingestor has judged another batch: how
 * integration tests judge a batch while a flush is in flight. The store's
 * write waits in untilJudged(); the stream's process() calls judging(); the
 * test sends the records to judge once held() says the write is held (sent
 * earlier, a loaded machine may judge them before the write begins, and the
 * hold then waits for a batch that never comes: a suite run on 2026-12-07).
 *
 * The waits are on those facts. Their bounds (60 s, half the tests'
 * timeout) are only there so an ingestor that never writes, or never judges
 * during a held write, fails with a message rather than the test's timeout.
 */
export class Hold {
  private release: (() => void) | undefined;
  private entered: () => void = () => undefined;
  private readonly enteredHold = new Promise<void>((resolve) => (this.entered = resolve));
  /** Whether a batch was judged while a write was held. */
  judgedDuringHold = false;

  /** The stream judges a batch now. */
  judging(): void {
    if (this.release === undefined) return;
    this.judgedDuringHold = true;
    this.release();
  }

  /** Waits until a batch is judged (or 60 s). */
  async untilJudged(): Promise<void> {
    let bound: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      this.release = resolve;
      bound = setTimeout(resolve, 60_000);
      this.entered();
    });
    clearTimeout(bound);
    this.release = undefined;
  }

  /** Resolves once a write is held in untilJudged(); throws after 60 s without one. */
  async held(): Promise<void> {
    let bound: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      bound = setTimeout(() => reject(new Error('no write was held within 60 s')), 60_000);
    });
    try {
      await Promise.race([this.enteredHold, timeout]);
    } finally {
      clearTimeout(bound);
    }
  }
}
