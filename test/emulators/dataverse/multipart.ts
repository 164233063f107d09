import type { IncomingMessage } from 'node:http';

/**
 * A multipart/form-data body split into its parts, as Jersey's FormDataParam sees them in
 * Dataverse's add/replace endpoints (Datasets.addFileToDataset: `file` with its
 * Content-Disposition file name and optional Content-Type, `jsonData` as text).
 * Test-only: the whole body is in memory.
 */
export interface FormPart {
  name: string;
  filename: string | null;
  contentType: string | null;
  body: Buffer;
}

export function parseMultipart(req: IncomingMessage, body: Buffer): FormPart[] | null {
  const type = req.headers['content-type'] ?? '';
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(type);
  if (!/^multipart\/form-data/i.test(type) || !boundary) return null;
  const delimiter = Buffer.from(`--${boundary[1] ?? boundary[2]}`);
  const parts: FormPart[] = [];
  let at = body.indexOf(delimiter);
  while (at !== -1) {
    const start = at + delimiter.length;
    if (body.subarray(start, start + 2).toString() === '--') break;
    const next = body.indexOf(delimiter, start);
    if (next === -1) return null;
    const chunk = body.subarray(start + 2, next - 2); // CRLF after the delimiter, CRLF before the next
    const split = chunk.indexOf('\r\n\r\n');
    if (split === -1) return null;
    const headers = chunk.subarray(0, split).toString('utf8');
    const disposition = /content-disposition:([^\r\n]*)/i.exec(headers)?.[1] ?? '';
    parts.push({
      name: /\bname="([^"]*)"/i.exec(disposition)?.[1] ?? '',
      filename: /\bfilename="([^"]*)"/i.exec(disposition)?.[1] ?? null,
      contentType: /content-type:\s*([^\r\n]*)/i.exec(headers)?.[1]?.trim() ?? null,
      body: chunk.subarray(split + 4),
    });
    at = next;
  }
  return parts;
}
