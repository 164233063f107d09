import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';

/**
 * A multipart/form-data body built as a stream, for Dataverse's add and replace endpoints
 * (a `jsonData` text part and a `file` part): the file's bytes are piped through, never held
 * in memory, and `open` makes a fresh body for each attempt so a refused request can be sent
 * again. The length is exact when the file's size is known.
 */
export type FormPart = { name: string; text: string } | { name: string; filename: string; contentType: string; size: number; open(): Promise<Readable> };

export interface FormBody {
  contentType: string;
  length: number;
  open(): Promise<Readable>;
}

export function formData(parts: FormPart[]): FormBody {
  const boundary = `----FerryBoundary${randomBytes(12).toString('hex')}`;
  const heads = parts.map((part) => {
    const disposition = `Content-Disposition: form-data; name="${quoted(part.name)}"${'filename' in part ? `; filename="${quoted(part.filename)}"` : ''}`;
    const type = 'filename' in part ? `\r\nContent-Type: ${part.contentType}` : '';
    return Buffer.from(`--${boundary}\r\n${disposition}${type}\r\n\r\n`, 'utf8');
  });
  const tail = Buffer.from(`--${boundary}--\r\n`);
  const CRLF = Buffer.from('\r\n');
  let length = tail.length;
  parts.forEach((part, i) => (length += (heads[i] as Buffer).length + ('text' in part ? Buffer.byteLength(part.text) : part.size) + CRLF.length));

  async function* chunks(): AsyncGenerator<Buffer> {
    for (const [i, part] of parts.entries()) {
      yield heads[i] as Buffer;
      if ('text' in part) yield Buffer.from(part.text, 'utf8');
      else for await (const chunk of await part.open()) yield Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
      yield CRLF;
    }
    yield tail;
  }
  return { contentType: `multipart/form-data; boundary=${boundary}`, length, open: async () => Readable.from(chunks(), { objectMode: false }) };
}

/** A quoted-string parameter as browsers write it (WHATWG form-data): `"`, CR and LF percent-encoded. */
const quoted = (value: string) => value.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
