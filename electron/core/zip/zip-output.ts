import { Readable } from 'node:stream';

/** a chunk of a large file (2 MiB, see local-target.ts) and then some; 4 MiB cost ~10 MiB of peak RSS */
const OUTPUT_BUFFER_BYTES = 2 * 1024 * 1024;
/** how often lent bytes are looked at while some are still out (no event says when a socket has sent them) */
const SETTLE_POLL_MS = 1;

/**
 * The stream a ZIP is piped into, straight and alone (an HTTP response): whatever it holds
 * counts in its `writableLength` until it has handed the bytes to the kernel.
 */
export interface LendingSink {
  readonly writableLength: number;
  readonly destroyed: boolean;
}

/**
 * The ZIP as a readable stream that counts what was written and lets the writer wait for a
 * reader.
 *
 * It can also take bytes on loan: views of memory that is reused once they are gone (the
 * shared slots a large file is read into, so its 2 GiB never become 2 GiB of short-lived
 * buffers, each one a step towards a full garbage collection). A loan is returned once
 * every byte written up to its end has left both this stream and the sink, which is only
 * known when the sink is the one consumer (see lendTo); otherwise lent bytes are copied.
 */
export class ZipOutput extends Readable {
  cursor = 0;
  private waiters: (() => void)[] = [];
  private sink: LendingSink | null = null;
  /** loans in the order written: the cursor at their end, and how to give the memory back */
  private loans: { end: number; giveBack: () => void }[] = [];
  private settleTimer: NodeJS.Timeout | null = null;

  constructor() {
    // room for a few chunks, so the producer runs ahead of the socket rather than in step with it
    super({ highWaterMark: OUTPUT_BUFFER_BYTES });
  }

  /**
   * Says this stream is piped straight into `sink` and nothing else reads it: lent bytes
   * then go out as they are. Call it before the first write.
   */
  lendTo(sink: LendingSink): void {
    this.sink = sink;
  }

  write(bytes: Buffer): void {
    if (this.destroyed) return;
    this.cursor += bytes.length;
    this.push(bytes);
  }

  /** Writes bytes whose memory `giveBack` reuses: called at once when they are copied, else once they are sent. */
  writeLent(bytes: Buffer, giveBack: () => void): void {
    if (!this.sink || this.destroyed) {
      this.write(Buffer.from(bytes));
      giveBack();
      return;
    }
    this.write(bytes);
    this.loans.push({ end: this.cursor, giveBack });
    this.settle();
  }

  /** Resolves once the reader has taken what is buffered down below the high-water mark. */
  drained(): Promise<void> {
    this.settle();
    if (this.destroyed || this.readableLength < this.readableHighWaterMark) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  override _read(): void {
    this.settle();
    this.wake();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.wake();
    this.settle();
    callback(error);
  }

  /** Gives back every loan the sink no longer holds; looks again shortly while any is out. */
  private settle(): void {
    if (this.loans.length === 0 || !this.sink) return;
    // Once this stream is destroyed nothing more reaches the sink: what it holds is sent
    // when it is empty, and nothing is sent once it is destroyed.
    const sent = this.sink.destroyed ? Infinity : this.destroyed ? (this.sink.writableLength === 0 ? Infinity : -1) : this.cursor - this.readableLength - this.sink.writableLength;
    let given = 0;
    while (given < this.loans.length && this.loans[given]!.end <= sent) this.loans[given++]!.giveBack();
    if (given > 0) this.loans.splice(0, given);
    if (this.loans.length > 0 && !this.settleTimer) {
      this.settleTimer = setTimeout(() => {
        this.settleTimer = null;
        this.settle();
      }, SETTLE_POLL_MS);
      this.settleTimer.unref();
    }
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}
