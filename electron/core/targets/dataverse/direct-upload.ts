import { FerryError, throwIfAborted } from '../../errors.js';
import { detachedSignal } from '../../remote/retry-notice.js';
import { isShutdownAbort } from '../../jobs/service.js';
import type { DataverseApi } from './api.js';
import type { JournalRecord, UploadJournal } from './upload-journal.js';
import type { StagedBytes } from './staged.js';

/**
 * Dataverse's direct upload (developers/s3-direct-upload-api.rst): ask for presigned URLs for
 * the file's size, PUT the bytes to storage (one URL, or one per `partSize` slice), complete a
 * multipart upload with the parts' ETags, and answer the storage identifier that `addFiles` /
 * `replace` then register. The presigned PUTs carry no Dataverse token (api.ts `storage`).
 *
 * Parts are byte ranges of the staged copy, sent in order. With a journal, every acknowledged
 * part is recorded, and an upload found there (a job resumed after a stop or a kill) sends only
 * the missing parts; if its URLs have expired (storage answers 403) it is abandoned and started
 * afresh. A whole upload (single PUT, or multipart completed) is journaled too, until the
 * caller removes it once Dataverse registered the file: a job stopped before the registration
 * registers it when resumed without sending the bytes again (`sentBefore`). Null when the
 * dataset's store does not allow direct upload.
 */
export async function uploadDirect(
  api: DataverseApi,
  datasetId: number,
  bytes: StagedBytes,
  signal: AbortSignal,
  journal?: { store: UploadJournal; key: string },
): Promise<{ storageIdentifier: string; sentBefore: boolean } | null> {
  const saved = journal ? await journal.store.load(journal.key) : null;
  if (saved) {
    const resumed = await attempt(api, bytes, saved, signal, journal, true);
    if (resumed !== null) return { storageIdentifier: resumed, sentBefore: saved.completed };
  }
  const urls = await api.uploadUrls(datasetId, bytes.size, signal);
  if (!urls) return null;
  if ('url' in urls) {
    await api.putPresigned(urls.url, bytes.size, () => bytes.open(), true, signal);
    await journal?.store.save(journal.key, { storageIdentifier: urls.storageIdentifier, partSize: urls.partSize, urls: {}, abort: '', complete: '', done: {}, completed: true });
    return { storageIdentifier: urls.storageIdentifier, sentBefore: false };
  }
  const record: JournalRecord = { storageIdentifier: urls.storageIdentifier, partSize: urls.partSize, urls: urls.urls, abort: urls.abort, complete: urls.complete, done: {}, completed: false };
  await journal?.store.save(journal.key, record);
  return { storageIdentifier: (await attempt(api, bytes, record, signal, journal, false)) as string, sentBefore: false };
}

/**
 * Sends what `record` lacks. A stop of Ferry keeps the upload for the resumed job; any other
 * failure aborts it and forgets it. A resumed upload whose URLs expired (403) answers null:
 * start afresh.
 */
async function attempt(api: DataverseApi, bytes: StagedBytes, record: JournalRecord, signal: AbortSignal, journal: { store: UploadJournal; key: string } | undefined, resumed: boolean): Promise<string | null> {
  try {
    return await sendParts(api, bytes, record, signal, journal);
  } catch (error) {
    if (journal && isShutdownAbort(signal)) throw error;
    await api.abortMultipart(record.abort, detachedSignal(signal)).catch(() => undefined);
    await journal?.store.remove(journal.key);
    if (resumed && error instanceof FerryError && error.status === 403) return null;
    throw error;
  }
}

async function sendParts(api: DataverseApi, bytes: StagedBytes, record: JournalRecord, signal: AbortSignal, journal?: { store: UploadJournal; key: string }): Promise<string> {
  if (!record.completed) {
    const numbers = Object.keys(record.urls).map(Number).sort((a, b) => a - b);
    for (const n of numbers) {
      throwIfAborted(signal);
      if (record.done[String(n)]) continue;
      const start = (n - 1) * record.partSize;
      const end = Math.min(bytes.size, start + record.partSize) - 1;
      record.done[String(n)] = await api.putPresigned(record.urls[String(n)] as string, end - start + 1, () => bytes.open({ start, end }), false, signal);
      await journal?.store.save(journal.key, record);
    }
    await api.completeMultipart(record.complete, record.done, signal);
    record.completed = true;
    await journal?.store.save(journal.key, record);
  }
  return record.storageIdentifier;
}
