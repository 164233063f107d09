import type { Entry, PartialFiles } from '../target.js';
import { identityOf, type ResumeJournal } from './resume-journal.js';

/**
 * A write's entries seen through its job's resume journal: a file an earlier run completed
 * with the same source bytes is left out (listed in `alreadyDone`), and each file the
 * destination confirms (`onFileWritten`) is recorded, and so is the durable part of a large
 * file a writer stopped in (`partials`, handed back only for the same source bytes). `sourcePathOf` maps a path as the
 * writer is handed it to the path as the source names it, the journal's key (they differ
 * when a resumed top-level write goes into the resource the first run made).
 */
export class JournaledEntries {
  /** source paths left out: completed by an earlier run */
  readonly alreadyDone: string[] = [];
  private readonly identities = new Map<string, string>();

  constructor(
    private readonly journal: ResumeJournal,
    private readonly sourcePathOf: (written: string) => string = (written) => written,
  ) {}

  async *filter(entries: AsyncIterable<Entry>): AsyncGenerator<Entry> {
    for await (const entry of entries) {
      if (entry.kind === 'file') {
        const key = this.sourcePathOf(entry.path);
        const identity = identityOf(entry);
        if (this.journal.has(key, identity)) {
          this.alreadyDone.push(key);
          continue;
        }
        if (identity !== null) this.identities.set(entry.path, identity);
      }
      yield entry;
    }
  }

  /** WriteOptions.onFileWritten: the destination confirmed the file at `written`. */
  readonly onFileWritten = (written: string): void => {
    const identity = this.identities.get(written);
    if (identity !== undefined) this.journal.recordFile(this.sourcePathOf(written), identity);
  };

  /** WriteOptions.partials: a file with no identity (a source that knows neither hash nor mtime) is never resumed part-way. */
  readonly partials: PartialFiles = {
    kept: (written) => this.journal.partial(this.sourcePathOf(written), this.identities.get(written) ?? null),
    keep: (written, kept) => {
      const identity = this.identities.get(written);
      if (identity !== undefined) this.journal.recordPartial(this.sourcePathOf(written), identity, kept);
    },
  };
}
