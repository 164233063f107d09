import { isShutdownAbort } from '../jobs/service.js';

/**
 * A new top-level upload makes its record (an OSF project, a Zenodo deposition, a figshare
 * item) before the first byte goes up. If the upload then fails or is cancelled, the record
 * is removed again, so a failed upload leaves nothing behind on the service; when removing
 * it fails too, the job's error names what was left and how to remove it by hand.
 */
export interface NewRecord {
  /** what it is, for messages: "the new Zenodo deposition 'Data' (id 123)" */
  label: string;
  /** how a person removes it: "delete it at https://zenodo.org/deposit/123" */
  howToRemove: string;
  /** removes it; called without the job's signal, which may have fired */
  remove(): Promise<void>;
}

/**
 * Runs a new top-level upload; `made` is called as soon as the service has made the record.
 * Whatever `upload` throws is rethrown (a cancellation stays a cancellation), its message
 * saying whether the record was removed. `resumable`: the write's signal, for a writer that
 * tells the job of the record it made (WriteOptions.onNewResource): when the job stops to go
 * on later (a pause, Ferry stopping: isShutdownAbort) the record is kept, and the resumed run
 * writes into it, leaving out the files its journal says are there.
 */
export async function removedOnFailure<T>(upload: (made: (record: NewRecord) => void) => Promise<T>, resumable?: AbortSignal): Promise<T> {
  let record: NewRecord | null = null;
  try {
    return await upload((made) => (record = made));
  } catch (error) {
    const made = record as NewRecord | null;
    if (!made || !(error instanceof Error)) throw error;
    if (resumable && isShutdownAbort(resumable)) throw error;
    try {
      await made.remove();
      error.message = `${error.message} ${capitalised(made.label)} was removed again, so nothing is left behind.`;
    } catch (removal) {
      const why = removal instanceof Error ? ` (${removal.message.replace(/\.$/, '')})` : '';
      error.message = `${error.message} ${capitalised(made.label)} was left behind and could not be removed${why}; ${made.howToRemove}.`;
    }
    throw error;
  }
}

const capitalised = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
