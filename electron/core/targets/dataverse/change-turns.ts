/**
 * One change of a dataset at a time, in entry order, while the files' other work overlaps.
 *
 * A write to Dataverse keeps several files in flight where the dataset's store takes direct
 * uploads (DATAVERSE_IN_FLIGHT): `uploadurls`, the storage PUTs and the completion of a
 * multipart upload change nothing in the dataset, so they run at once. What changes the
 * dataset's draft version — a native add, a replace, an `addFiles` registration, and the lock
 * checks before them — takes the file's turn: each file takes one as it is started, in entry
 * order, and may change the dataset only once every earlier file's turn has ended. So the
 * dataset never sees two changes at once (concurrent changes fail with OptimisticLockException,
 * IQSS/dataverse#11265), and direct uploads join the `addFiles` batches in entry order.
 */
export interface Turn {
  /** Resolves once every earlier turn has ended; the holder then changes the dataset, until `end`. */
  wait(): Promise<void>;
  /** Lets the next turn go; idempotent. Every turn taken must end, whether or not it waited. */
  end(): void;
}

export class ChangeTurns {
  /** settles once the last turn taken, and every one before it, has ended */
  private last: Promise<void> = Promise.resolve();

  /** A turn after every one already taken: take it when the file is started, in entry order. */
  take(): Turn {
    const before = this.last;
    let end!: () => void;
    const ended = new Promise<void>((resolve) => (end = resolve));
    // a turn that ends early (an ignored file) still lets the next go only after the earlier ones
    this.last = before.then(() => ended);
    return { wait: () => before, end };
  }
}
