import { CancelledError } from '../errors.js';

/**
 * The requests one write keeps under way (issue #18), where each file's task sends several
 * one after another (WebDAV: a PUT, then a MOVE). With one slot a file, a slot idles while
 * its task does what lies between requests: takes its next entry, settles its folder, opens
 * its bytes. So such a write prepares more files than it has slots
 * (`PipelineLimits.requests` below `files`) and each request takes a slot for itself: when a
 * request ends, one already prepared goes at once.
 * Invariants:
 * - never more than `size` slots held; waiters are granted in the order they asked;
 * - a slot is held by one request and for that request alone: a holder never waits for
 *   another slot (with every slot held by a waiting holder, the write would wait for ever);
 * - a cancelled `signal` throws CancelledError from every wait, at once; a held slot is given
 *   back when its request ends, whatever became of it.
 */
export class RequestSlots {
  private held = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    readonly size: number,
    private readonly signal?: AbortSignal,
  ) {}

  /** Sends `request` once a slot is free; the slot is given back when it settles. */
  async run<T>(request: () => Promise<T>): Promise<T> {
    await this.take();
    try {
      return await request();
    } finally {
      this.giveBack();
    }
  }

  private take(): Promise<void> {
    if (this.signal?.aborted) return Promise.reject(new CancelledError());
    if (this.held < this.size) {
      this.held++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const grant = () => {
        this.signal?.removeEventListener('abort', cancel);
        resolve();
      };
      const cancel = () => {
        this.waiting.splice(this.waiting.indexOf(grant), 1);
        reject(new CancelledError());
      };
      this.waiting.push(grant);
      this.signal?.addEventListener('abort', cancel, { once: true });
    });
  }

  private giveBack(): void {
    const next = this.waiting.shift();
    // the slot passes straight to the next waiter: `held` stays as it is
    if (next) next();
    else this.held--;
  }
}
