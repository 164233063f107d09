// The text formats of a BagIt bag (RFC 8493) that both the writer and the upload reader
// need: manifest lines, the percent-encoding of paths in them, and tag-file fields.

/** Manifest algorithms Ferry writes into every bag it makes. */
export const WRITTEN_ALGORITHMS = ['md5', 'sha256'] as const;

/** Manifest algorithms Ferry can check in an uploaded bag (RFC 8493 §2.4 names). */
export const CHECKABLE_ALGORITHMS = ['md5', 'sha1', 'sha256', 'sha512'] as const;

export const BAGIT_TXT = 'BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n';

/**
 * RFC 8493 §2.1.3: in a manifest, CR, LF and % in a file path (and only those) are
 * percent-encoded, so every line stays one line.
 */
export function encodeManifestPath(path: string): string {
  return path.replace(/[%\r\n]/g, (c) => (c === '%' ? '%25' : c === '\r' ? '%0D' : '%0A'));
}

export function decodeManifestPath(encoded: string): string {
  return encoded.replace(/%(25|0A|0D)/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

export function manifestLine(hex: string, path: string): string {
  return `${hex}  ${encodeManifestPath(path)}\n`;
}

export interface ManifestLine {
  hex: string;
  path: string;
  lineNumber: number;
}

/** Parses `<checksum> <whitespace> <path>` lines; malformed lines are returned separately. */
export function parseManifest(text: string): { lines: ManifestLine[]; malformed: number[] } {
  const lines: ManifestLine[] = [];
  const malformed: number[] = [];
  text
    .replace(/^\uFEFF/, '')
    .split(/\r\n|\n|\r/)
    .forEach((line, index) => {
      if (line.trim() === '') return;
      const match = /^([0-9A-Fa-f]+)[ \t]+(.+)$/.exec(line);
      const [, hex, path] = match ?? [];
      if (hex === undefined || path === undefined) malformed.push(index + 1);
      else lines.push({ hex: hex.toLowerCase(), path: decodeManifestPath(path), lineNumber: index + 1 });
    });
  return { lines, malformed };
}

/** `Label: value` tag lines (continuation lines start with whitespace), labels as written. */
export function parseTagFields(text: string): Map<string, string[]> {
  const fields = new Map<string, string[]>();
  let last: { label: string; index: number } | null = null;
  for (const line of text.replace(/^\uFEFF/, '').split(/\r\n|\n|\r/)) {
    if (/^[ \t]/.test(line) && last) {
      const values = fields.get(last.label)!;
      values[last.index] += ` ${line.trim()}`;
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const label = line.slice(0, colon).trim();
    const values = fields.get(label) ?? [];
    values.push(line.slice(colon + 1).trim());
    fields.set(label, values);
    last = { label, index: values.length - 1 };
  }
  return fields;
}

/** `YYYY-MM-DD` in UTC, the form RFC 8493 suggests for Bagging-Date. */
export function baggingDate(date: Date): string {
  return date.toISOString().slice(0, 10);
}
