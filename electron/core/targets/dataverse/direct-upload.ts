import { throwIfAborted } from '../../errors.js';
import type { DataverseApi } from './api.js';
import type { StagedBytes } from './staged.js';

/**
 * Dataverse's direct upload (developers/s3-direct-upload-api.rst): ask for presigned URLs for
 * the file's size, PUT the bytes to storage (one URL, or one per `partSize` slice), complete a
 * multipart upload with the parts' ETags, and answer the storage identifier that `addFiles` /
 * `replace` then register. The presigned PUTs carry no Dataverse token (api.ts `storage`).
 *
 * Parts are sent in order and each is a byte range of the staged copy, so a part that fails is
 * sent again alone, and `done` (part number → ETag) is all a resumed upload needs besides the
 * still-valid URLs. Null when the dataset's store does not allow direct upload.
 */
export async function uploadDirect(api: DataverseApi, datasetId: number, bytes: StagedBytes, signal: AbortSignal, done: Record<string, string> = {}): Promise<string | null> {
  const urls = await api.uploadUrls(datasetId, bytes.size, signal);
  if (!urls) return null;
  if ('url' in urls) {
    await api.putPresigned(urls.url, bytes.size, () => bytes.open(), true, signal);
    return urls.storageIdentifier;
  }
  try {
    const numbers = Object.keys(urls.urls).map(Number).sort((a, b) => a - b);
    for (const n of numbers) {
      throwIfAborted(signal);
      if (done[String(n)]) continue;
      const start = (n - 1) * urls.partSize;
      const end = Math.min(bytes.size, start + urls.partSize) - 1;
      done[String(n)] = await api.putPresigned(urls.urls[String(n)] as string, end - start + 1, () => bytes.open({ start, end }), false, signal);
    }
    await api.completeMultipart(urls.complete, done, signal);
  } catch (error) {
    // storage keeps parts of an upload nobody completes; abort tells Dataverse to drop them
    await api.abortMultipart(urls.abort).catch(() => undefined);
    throw error;
  }
  return urls.storageIdentifier;
}
