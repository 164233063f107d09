// An upload's `service-file` part, streamed to a spool file under <dataDir>/spool/ (the job
// reads it later). Written under a temporary name and renamed only once complete, under
// the size limit and recognisably a ZIP; anything else removes the partial file.
import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { FastifyRequest } from 'fastify';
import { badRequest, FerryError, tooLarge } from '../core/errors.js';

export const FILE_FIELD = 'service-file';

export function spoolDir(dataDir: string): string {
  return path.join(dataDir, 'spool');
}

/** Local file header, or the end-of-central-directory record that is all an empty ZIP holds. */
const ZIP_SIGNATURES = [Buffer.from([0x50, 0x4b, 0x03, 0x04]), Buffer.from([0x50, 0x4b, 0x05, 0x06])];

export async function startsLikeZip(file: string): Promise<boolean> {
  const handle = await open(file, 'r');
  try {
    const head = Buffer.alloc(4);
    const { bytesRead } = await handle.read(head, 0, 4, 0);
    return bytesRead === 4 && ZIP_SIGNATURES.some((signature) => signature.equals(head));
  } finally {
    await handle.close();
  }
}

function describeLimit(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${Number.isInteger(value) ? value : value.toFixed(1)} ${units[unit]}`;
}

/** Returns the spool file's path; the caller owns it (hand it to the job, or remove it). */
export async function spoolUpload(request: FastifyRequest, dataDir: string, maxBytes: number): Promise<string> {
  const dir = spoolDir(dataDir);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const name = randomUUID();
  const partial = path.join(dir, `${name}.part`);
  const final = path.join(dir, `${name}.zip`);
  let spooled = false;
  try {
    const parts = request.parts({ limits: { fileSize: maxBytes, fields: 50, parts: 100 } });
    for await (const part of parts) {
      if (part.type !== 'file') continue;
      if (part.fieldname !== FILE_FIELD || spooled) {
        part.file.resume(); // drain parts we do not use
        continue;
      }
      await pipeline(part.file, createWriteStream(partial, { flags: 'wx', mode: 0o600 }));
      if (part.file.truncated) throw tooLarge(`The upload is larger than the limit of ${describeLimit(maxBytes)}.`);
      spooled = true;
    }
    if (!spooled) throw badRequest(`Send the ZIP in the multipart field '${FILE_FIELD}'.`, 'missing_file');
    if (!(await startsLikeZip(partial))) {
      throw badRequest(`The file in '${FILE_FIELD}' is not a ZIP archive.`, 'not_a_zip');
    }
    await rename(partial, final);
    return final;
  } catch (error) {
    await rm(partial, { force: true });
    const code = (error as { code?: unknown }).code;
    if (code === 'FST_REQ_FILE_TOO_LARGE') throw tooLarge(`The upload is larger than the limit of ${describeLimit(maxBytes)}.`);
    if (error instanceof FerryError) throw error;
    if (typeof code === 'string' && code.startsWith('FST_')) throw error; // the error handler phrases these
    if ((error as { code?: string }).code === 'ERR_STREAM_PREMATURE_CLOSE' || request.raw.destroyed) {
      throw badRequest('The upload was cut off before the whole file arrived.');
    }
    throw error;
  }
}
