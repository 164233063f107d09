// Downloads from the local API into a file, in the main process (a plain link could not
// send the access key). Streamed to `<name>.part` and renamed when complete, so a cancelled
// or failed download leaves no partial file behind. Also stages remote items for a native
// drag-out, which needs files that already exist on disk.
import { createWriteStream } from 'node:fs';
import { mkdtemp, rename, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Connection, DragOutItem } from '../../shared/ipc.js';

export interface DownloadProgress {
  bytes: number;
  total: number | null;
}

/** A relative API path only: the renderer cannot make main fetch another host. */
export function isApiDownloadPath(apiPath: string): boolean {
  return /^\/api_v1\/targets\/[^/?#]+\/resources\/[^/?#]+\.zip\/(\?keep=1)?$/.test(apiPath);
}

/** A name safe as one file name on every OS. */
export function safeFileName(name: string): string {
  const cleaned = name
    // control characters are exactly what must go: they are invalid in Windows file names
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u001f<>:"/\\|?*]/g, '_')
    .replace(/[. ]+$/, '')
    .slice(0, 200);
  return cleaned && !/^(con|prn|aux|nul|com\d|lpt\d)(\..*)?$/i.test(cleaned) ? cleaned : 'download';
}

export async function downloadToFile(
  connection: Connection,
  apiPath: string,
  destination: string,
  onProgress: (progress: DownloadProgress) => void,
  signal?: AbortSignal,
): Promise<number> {
  if (!isApiDownloadPath(apiPath)) throw new Error('Only Ferry downloads can be saved this way.');
  const url = new URL(apiPath, connection.url);
  const response = await fetch(url, { headers: { Authorization: `Bearer ${connection.accessKey}` }, signal });
  if (!response.ok || !response.body) {
    let sentence = `The download failed (${response.status}).`;
    try {
      const body = (await response.json()) as { error?: string };
      if (body.error) sentence = body.error;
    } catch {
      /* keep the status sentence */
    }
    throw new Error(sentence);
  }
  const totalHeader = Number(response.headers.get('content-length'));
  const total = Number.isFinite(totalHeader) && totalHeader > 0 ? totalHeader : null;
  const partial = `${destination}.part`;
  let bytes = 0;
  let last = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      bytes += chunk.length;
      const now = Date.now();
      if (now - last > 200) {
        last = now;
        onProgress({ bytes, total });
      }
      callback(null, chunk);
    },
  });
  try {
    await pipeline(Readable.fromWeb(response.body as never), counter, createWriteStream(partial, { mode: 0o644 }));
    await rename(partial, destination);
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  }
  onProgress({ bytes, total });
  return bytes;
}

/** Downloads each item's ZIP into a fresh temp folder; returns the file paths. */
export async function stageForDrag(
  connection: Connection,
  items: readonly DragOutItem[],
  onProgress: (progress: DownloadProgress) => void,
): Promise<{ folder: string; files: string[] }> {
  const folder = await mkdtemp(path.join(os.tmpdir(), 'ferry-drag-'));
  const files: string[] = [];
  let before = 0;
  try {
    for (const item of items) {
      const file = path.join(folder, `${safeFileName(item.title)}.zip`);
      const apiPath = `/api_v1/targets/${encodeURIComponent(item.target)}/resources/${encodeURIComponent(item.id)}.zip/`;
      before += await downloadToFile(connection, apiPath, file, (p) => onProgress({ bytes: before + p.bytes, total: null }));
      files.push(file);
    }
  } catch (error) {
    await rm(folder, { recursive: true, force: true });
    throw error;
  }
  return { folder, files };
}
