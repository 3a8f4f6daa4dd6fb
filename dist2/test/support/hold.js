/**
 * A write a test holds until the ingestor has judged another batch (or
 * 10 s): how integration tests judge a batch while a flush is in flight. The
 * store's write waits in untilJudged(); the stream's process() calls judging().
 */
import { sleep } from './processes.js';
export class Hold {
    holding = false;
    /** Whether a batch was judged while a write was held. */
    judgedDuringHold = false;
    /** The stream judges a batch now. */
    judging() {
        if (this.holding)
            this.judgedDuringHold = true;
    }
    /** Waits until a batch is judged, or 10 s. */
    async untilJudged() {
        this.holding = true;
        for (let i = 0; i < 100 && !this.judgedDuringHold; i++)
            await sleep(100);
        this.holding = false;
    }
}
//# sourceMappingURL=hold.js.map