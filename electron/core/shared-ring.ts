/**
 * Slots of shared memory that carry one stream's bytes to worker threads without copying
 * them per worker (electron/core/hashing.ts, electron/core/bag/bag-workers.ts). A slot is
 * reused, in order, once every reader it was handed to (see hand) has released it. The ring
 * alone counts its readers: a slot is never written while one still holds it.
 */
export class SharedRing {
  readonly view: Buffer;
  /** per slot: how many readers still hold it */
  private readonly pending: Int32Array;
  private waiter: (() => void) | null = null;
  private next = 0;
  /** called once when a retired ring has no slot left in use */
  onIdle: (() => void) | null = null;

  constructor(
    readonly id: number,
    readonly slotBytes: number,
    readonly slots: number,
  ) {
    this.pending = new Int32Array(slots);
    this.view = Buffer.from(new SharedArrayBuffer(slotBytes * slots));
  }

  /** The next slot in order, once every worker is done with it. */
  async acquire(): Promise<number> {
    const slot = this.next;
    while (this.pending[slot]! > 0) await new Promise<void>((resolve) => (this.waiter = resolve));
    this.next = (slot + 1) % this.slots;
    return slot;
  }

  /**
   * The slot acquired goes to `readers` readers (workers it is posted to, the socket it is
   * lent to, or this thread while it fills it); each calls release once. Replaces the count
   * it had: call it when the slot changes hands as a whole.
   */
  hand(slot: number, readers: number): void {
    this.pending[slot] = readers;
  }

  /** One reader is done with the slot. */
  release(slot: number): void {
    if (this.pending[slot]! > 0) this.pending[slot]! -= 1;
    if (this.pending[slot]! > 0) return;
    this.wake();
    if (this.onIdle && this.idle) {
      const idle = this.onIdle;
      this.onIdle = null;
      idle();
    }
  }

  /** Frees every slot at once (the workers are gone). */
  reset(): void {
    this.pending.fill(0);
    this.wake();
  }

  get idle(): boolean {
    return this.pending.every((count) => count === 0);
  }

  private wake(): void {
    const wake = this.waiter;
    this.waiter = null;
    wake?.();
  }
}
