// An upload's `service-file` part, streamed to a spool file under <dataDir>/spool/ (the job
// reads it later). Written under a temporary name and renamed only once complete, under
// the size limit and recognisably a ZIP; anything else removes the partial file.
import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { FastifyRequest } from 'fastify';
import { badRequest, FerryError, tooLarge } from '../core/errors.js';
import { looksLikeZip } from '../core/zip/central-directory.js';
import { doneWithBytes } from '../core/young-collection.js';
import { formatBytes } from '../../shared/format.js';

export const FILE_FIELD = 'service-file';

export function spoolDir(dataDir: string): string {
  return path.join(dataDir, 'spool');
}

/** a `boundary` parameter with a value (quoted or not), as busboy requires */
const MULTIPART_BOUNDARY = /;\s*boundary\s*=\s*(?:"[^"]+"|[^\s;"]+)/i;

/**
 * busboy 3.2.6 (Dicer) stalls for good when a part it skips (a Content-Disposition other
 * than form-data) gets more bytes in one write than its part buffer holds: the body's write
 * callback is never called, and the request hangs until the idle timeout. With part buffers
 * larger than any one socket read (64 KiB) that never happens; a file part still pushes
 * back on the request once this much waits for the disk.
 */
const PART_BUFFER_BYTES = 1024 * 1024;

/**
 * What the spool file's stream holds before it pushes back. With the default 16 KiB each
 * 64 KiB socket read filled it: every chunk paused the body, waited for its own write and
 * resumed it. With room for a few MiB the chunks that arrive while one write is on the disk
 * go out together as the next write (writev).
 */
const SPOOL_WRITE_BYTES = 4 * 1024 * 1024;

/** Room for the multipart framing and a few small fields around the file itself. */
const MULTIPART_OVERHEAD_BYTES = 1024 * 1024;
/** Text fields: the route reads the ones it names (`readField`); a few other small ones (a client's note, a CSRF token) are tolerated. */
const FIELD_LIMITS = { fields: 20, fieldSize: 64 * 1024, fieldNameSize: 200, parts: 30 };

/** A part's field name for a message: busboy leaves it undefined when the part has no `name`. */
function shownName(fieldname: string | undefined): string {
  return String(fieldname ?? '').slice(0, 40);
}

/**
 * Returns the spool file's path; the caller owns it (hand it to the job, or remove it).
 * `readField` is handed each text field as it arrives (before or after the file); what it
 * throws refuses the upload, and the partial spool is removed.
 */
export async function spoolUpload(
  request: FastifyRequest,
  dataDir: string,
  maxBytes: number,
  readField: (name: string, value: string) => void = () => {},
): Promise<string> {
  const overLimit = () => tooLarge(`The upload is larger than the limit of ${formatBytes(maxBytes)}.`);
  // an announced length over the limit is refused before a byte is read
  const announced = Number(request.headers['content-length']);
  if (Number.isFinite(announced) && announced > maxBytes + MULTIPART_OVERHEAD_BYTES) throw overLimit();

  // busboy throws on a missing boundary when it is made; were the body still arriving, that
  // error looked like neither a malformed form nor a cut-off upload (a 500): refuse it here
  if (!MULTIPART_BOUNDARY.test(String(request.headers['content-type'] ?? ''))) {
    throw badRequest(`The multipart body has no boundary in its Content-Type; send the ZIP as multipart/form-data in '${FILE_FIELD}'.`);
  }

  const dir = spoolDir(dataDir);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const name = randomUUID();
  const partial = path.join(dir, `${name}.part`);
  const final = path.join(dir, `${name}.zip`);
  let spooled = false;
  try {
    const parts = request.parts({ limits: { ...FIELD_LIMITS, fileSize: maxBytes, files: 2 }, fileHwm: PART_BUFFER_BYTES });
    for await (const part of parts) {
      if (part.type !== 'file') {
        if (part.valueTruncated) throw tooLarge(`The form field '${shownName(part.fieldname)}' is larger than ${formatBytes(FIELD_LIMITS.fieldSize)}.`);
        readField(part.fieldname, String(part.value));
        continue;
      }
      // an unexpected file is refused, not read to its end (it could be as large as the limit)
      if (part.fieldname !== FILE_FIELD) {
        throw badRequest(`Send the ZIP in the multipart field '${FILE_FIELD}', and no other file (got ${part.fieldname ? `'${shownName(part.fieldname)}'` : 'a file part without a name'}).`, 'missing_file');
      }
      if (spooled) throw badRequest(`Send exactly one file in '${FILE_FIELD}'.`);
      // each chunk is garbage once written, a moment later: counted as done with now (young-collection.ts)
      part.file.on('data', (chunk: Buffer) => doneWithBytes(chunk.length));
      // busboy only marks a file truncated at the END of its part, which a hostile body
      // never sends: stop at the limit itself
      part.file.once('limit', () => part.file.destroy(overLimit()));
      await pipeline(part.file, createWriteStream(partial, { flags: 'wx', mode: 0o600, highWaterMark: SPOOL_WRITE_BYTES }));
      if (part.file.truncated) throw overLimit();
      spooled = true;
    }
    if (!spooled) throw badRequest(`Send the ZIP in the multipart field '${FILE_FIELD}'.`, 'missing_file');
    if (!(await looksLikeZip(partial))) {
      throw badRequest(`The file in '${FILE_FIELD}' is not a ZIP archive.`, 'not_a_zip');
    }
    await rename(partial, final);
    return final;
  } catch (error) {
    await rm(partial, { force: true });
    const code = (error as { code?: unknown }).code;
    if (code === 'FST_REQ_FILE_TOO_LARGE') throw overLimit();
    if (code === 'FST_FIELDS_LIMIT' || code === 'FST_PARTS_LIMIT' || code === 'FST_FILES_LIMIT') {
      throw tooLarge(`The form has too many fields or files; send only the ZIP in '${FILE_FIELD}'.`);
    }
    if (error instanceof FerryError) throw error;
    if (typeof code === 'string' && code.startsWith('FST_')) throw error; // the error handler phrases these
    // the whole body arrived: busboy's complaint is about its form ("Unexpected end of form");
    // its "Multipart: ..." errors are about the form whenever they come
    if (error instanceof Error && (request.raw.complete || /^Multipart: /.test(error.message))) {
      throw badRequest(`The multipart body is malformed (${error.message.replace(/[^\w .,'-]/g, '').slice(0, 80)}).`);
    }
    if (code === 'ERR_STREAM_PREMATURE_CLOSE' || request.raw.destroyed) {
      throw badRequest('The upload was cut off before the whole file arrived.');
    }
    throw error;
  }
}
