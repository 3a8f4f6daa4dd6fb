/**
 * A write a test holds until the ingestor has judged another batch: how
 * integration tests judge a batch while a flush is in flight. The store's
 * write waits in untilJudged(); the stream's process() calls judging().
 *
 * The wait is on that fact. Its bound (60 s, half the tests' timeout) is only
 * there so an ingestor that never judges during a held write fails the test's
 * assertion on `judgedDuringHold` rather than its timeout; a loaded machine
 * took more than 10 s for the next fetch once.
 */
export class Hold {
  private release: (() => void) | undefined;
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
    });
    clearTimeout(bound);
    this.release = undefined;
  }
}
