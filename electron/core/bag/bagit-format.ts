import { TextDecoder } from 'node:util';

// The text formats of a BagIt bag (RFC 8493) that both the writer and the upload reader
// need: the bag declaration, tag-file text in its declared encoding, manifest and fetch
// lines, the percent-encoding of paths in them, and tag-file fields. Parsing only: what a
// bag must hold, and what is refused, is decided in bag-validator.ts.

/** Manifest algorithms Ferry writes into every bag it makes. */
export const WRITTEN_ALGORITHMS = ['md5', 'sha256'] as const;

/** Manifest algorithms Ferry can check in an uploaded bag (RFC 8493 §2.4 names: lowercase, no punctuation). */
export const CHECKABLE_ALGORITHMS = ['md5', 'sha1', 'sha224', 'sha256', 'sha384', 'sha512'] as const;

/** hex digits of each checkable algorithm's digest, to name a truncated or padded checksum as such */
export const HEX_DIGITS: Readonly<Record<(typeof CHECKABLE_ALGORITHMS)[number], number>> = {
  md5: 32,
  sha1: 40,
  sha224: 56,
  sha256: 64,
  sha384: 96,
  sha512: 128,
};

export const BAGIT_TXT = 'BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n';

/**
 * RFC 8493 §2.1.3: in a manifest, CR, LF and % in a file path (and only those) are
 * percent-encoded, so every line stays one line.
 */
export function encodeManifestPath(path: string): string {
  return path.replace(/[%\r\n]/g, (c) => (c === '%' ? '%25' : c === '\r' ? '%0D' : '%0A'));
}

/**
 * The inverse of encodeManifestPath. `percent: false` for bags before 1.0: their drafts
 * encoded only CR and LF, so "%25" there is three characters of a real name.
 */
export function decodeManifestPath(encoded: string, percent = true): string {
  const escapes = percent ? /%(25|0A|0D)/gi : /%(0A|0D)/gi;
  return encoded.replace(escapes, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

export function manifestLine(hex: string, path: string): string {
  return `${hex}  ${encodeManifestPath(path)}\n`;
}

export interface ManifestLine {
  hex: string;
  path: string;
  lineNumber: number;
}

/**
 * Parses `<checksum> <whitespace> <path>` lines; malformed lines are returned separately.
 * The path is everything after the whitespace, trailing spaces included: they are part of
 * the name (bagit-python strips them, and then cannot find such a file).
 */
export function parseManifest(text: string, options: { percent?: boolean } = {}): { lines: ManifestLine[]; malformed: number[] } {
  const lines: ManifestLine[] = [];
  const malformed: number[] = [];
  splitLines(text).forEach((line, index) => {
    if (line.trim() === '') return;
    const match = /^([0-9A-Fa-f]+)[ \t]+(.+)$/.exec(line);
    const [, hex, path] = match ?? [];
    if (hex === undefined || path === undefined) malformed.push(index + 1);
    else lines.push({ hex: hex.toLowerCase(), path: decodeManifestPath(path, options.percent), lineNumber: index + 1 });
  });
  return { lines, malformed };
}

export interface FetchLine {
  url: string;
  /** octets, or null for "-" (unknown) */
  length: number | null;
  path: string;
  lineNumber: number;
}

/** RFC 8493 §2.2.3: `<url> <length or -> <path>` lines, the path encoded as in a manifest. */
export function parseFetch(text: string, options: { percent?: boolean } = {}): { lines: FetchLine[]; malformed: number[] } {
  const lines: FetchLine[] = [];
  const malformed: number[] = [];
  splitLines(text).forEach((line, index) => {
    if (line.trim() === '') return;
    const match = /^(\S+)[ \t]+([0-9]+|-)[ \t]+(.+)$/.exec(line);
    const [, url, length, path] = match ?? [];
    if (url === undefined || length === undefined || path === undefined) malformed.push(index + 1);
    else lines.push({ url, length: length === '-' ? null : Number(length), path: decodeManifestPath(path, options.percent), lineNumber: index + 1 });
  });
  return { lines, malformed };
}

/** A bag's `BagIt-Version: M.N`. */
export interface BagItVersion {
  major: number;
  minor: number;
}

export interface BagDeclaration {
  version: BagItVersion;
  /** as written in bagit.txt, e.g. "UTF-8" */
  encoding: string;
}

const BOM_UTF8 = Buffer.from([0xef, 0xbb, 0xbf]);

/**
 * bagit.txt as RFC 8493 §2.1.1 has it: UTF-8 without a byte-order mark, exactly the two
 * lines `BagIt-Version: M.N` and `Tag-File-Character-Encoding: ENCODING`, in that order.
 * Everything else in a bag is read through the encoding it names, so nothing is guessed
 * here: the declaration, or the sentences saying what is wrong with it.
 */
export function parseBagDeclaration(bytes: Buffer): { declaration: BagDeclaration; problems?: undefined } | { problems: string[] } {
  const rule = 'RFC 8493 §2.1.1';
  if (bytes.subarray(0, 3).equals(BOM_UTF8)) return { problems: [`bagit.txt starts with a byte-order mark, which ${rule} forbids in the bag declaration`] };
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return { problems: [`bagit.txt is not valid UTF-8, which ${rule} requires of the bag declaration`] };
  }
  const lines = splitLines(text);
  // a line break after the last line (or a few) ends a line; it is not another line
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  const problems: string[] = [];
  const version = declarationLine(lines[0], 'BagIt-Version', 1, problems);
  const encoding = declarationLine(lines[1], 'Tag-File-Character-Encoding', 2, problems);
  if (lines.length > 2) problems.push(`bagit.txt has ${lines.length} lines; ${rule} allows exactly two`);
  if (version !== null) {
    const match = /^([0-9]+)\.([0-9]+)$/.exec(version);
    if (match) {
      if (problems.length === 0 && encoding !== null) return { declaration: { version: { major: Number(match[1]), minor: Number(match[2]) }, encoding } };
    } else {
      problems.push(`bagit.txt gives BagIt-Version ${JSON.stringify(version)}, which is not a version number M.N (${rule})`);
    }
  }
  return { problems };
}

/** The value of line `number` of bagit.txt, which must read exactly `<label>: <value>`. */
function declarationLine(line: string | undefined, label: string, number: number, problems: string[]): string | null {
  const rule = `RFC 8493 §2.1.1 wants "${label}: …" as its line ${number}`;
  if (line === undefined) {
    problems.push(`bagit.txt has no ${label} line (${rule})`);
    return null;
  }
  const exact = new RegExp(`^${label}: (\\S(?:.*\\S)?)$`).exec(line);
  if (exact) return exact[1]!;
  const shown = `bagit.txt line ${number} is ${JSON.stringify(line.slice(0, 60))}`;
  const loose = new RegExp(`^(${label})([ \\t]*):([ \\t]*)(.*?)([ \\t]*)$`, 'i').exec(line);
  if (!loose) {
    problems.push(`${shown}, not ${label} (${rule})`);
    return null;
  }
  const [, spelled, before, after, value, trailing] = loose;
  const wrong = [
    spelled !== label ? `the label spelled ${label}` : '',
    before ? 'no space before the colon' : '',
    after !== ' ' ? 'one space after it' : '',
    trailing ? 'nothing after the value' : '',
    value === '' ? 'a value' : '',
  ].filter(Boolean);
  problems.push(`${shown}, but RFC 8493 §2.1.1 wants "${label}: …" there (${wrong.join(', ')})`);
  return null;
}

/**
 * A tag file's bytes as text in the encoding bagit.txt declares (RFC 8493 §2.1.1 lets it
 * be any IANA charset; "UTF-8" is what it recommends). Decoding is strict: a byte that is
 * not valid in the encoding is an error naming it, never a replacement character that
 * would make a path in a manifest silently name some other file.
 */
export function decodeTagText(bytes: Buffer, encoding: string): { text: string; bom: boolean } | { error: string } {
  const label = encoding.trim().toLowerCase();
  const invalid = { error: `is not valid ${encoding}, the encoding bagit.txt declares for tag files` };
  const strict = (name: string, body: Uint8Array) => new TextDecoder(name, { fatal: true, ignoreBOM: true }).decode(body);
  try {
    if (label === 'utf-8' || label === 'utf8') {
      const bom = bytes.subarray(0, 3).equals(BOM_UTF8);
      return { text: strict('utf-8', bom ? bytes.subarray(3) : bytes), bom };
    }
    if (label === 'utf-16' || label === 'utf-16be' || label === 'utf-16le') {
      if (bytes.length % 2 !== 0) return invalid;
      const marked = bytes[0] === 0xfe && bytes[1] === 0xff ? 'be' : bytes[0] === 0xff && bytes[1] === 0xfe ? 'le' : null;
      // RFC 2781 §4.3: UTF-16 without a byte-order mark is big-endian
      const order = label === 'utf-16le' ? 'le' : label === 'utf-16be' ? 'be' : (marked ?? 'be');
      const body = marked === order ? bytes.subarray(2) : bytes;
      const little = order === 'le' ? body : Buffer.from(body).swap16();
      return { text: strict('utf-16le', little), bom: marked === order };
    }
    // WHATWG decoders read these labels as windows-1252, which gives 0x80-0x9F other characters
    if (LATIN1_LABELS.has(label)) return { text: bytes.toString('latin1'), bom: false };
    if (ASCII_LABELS.has(label)) return bytes.every((byte) => byte < 0x80) ? { text: bytes.toString('latin1'), bom: false } : invalid;
  } catch {
    return invalid;
  }
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(label, { fatal: true });
  } catch {
    return { error: `is in ${encoding} (bagit.txt says so), an encoding Ferry cannot read; re-make the bag with UTF-8 tag files` };
  }
  try {
    return { text: decoder.decode(bytes), bom: false };
  } catch {
    return invalid;
  }
}

/** IANA names and aliases of ISO-8859-1 (RFC 1345) */
const LATIN1_LABELS: ReadonlySet<string> = new Set(['iso-8859-1', 'iso_8859-1', 'iso_8859-1:1987', 'iso-ir-100', 'latin1', 'l1', 'ibm819', 'cp819', 'csisolatin1']);
/** IANA names and aliases of US-ASCII */
const ASCII_LABELS: ReadonlySet<string> = new Set(['us-ascii', 'ascii', 'ansi_x3.4-1968', 'iso646-us', 'us', 'ibm367', 'cp367', 'csascii']);

/** Lines ended by LF, CR or CRLF (RFC 8493 §2.1.1: any of the three); a leading BOM is not text. */
function splitLines(text: string): string[] {
  return text.replace(/^\uFEFF/, '').split(/\r\n|\n|\r/);
}

/** `Label: value` tag lines (continuation lines start with whitespace), labels as written. */
export function parseTagFields(text: string): Map<string, string[]> {
  const fields = new Map<string, string[]>();
  let last: { label: string; index: number } | null = null;
  for (const line of splitLines(text)) {
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

/**
 * Lines of a `Label: value` tag file that RFC 8493 §2.2.2 does not allow: no colon, or a
 * continuation line with nothing to continue. `strict` (BagIt 1.0) also holds the label to
 * "no whitespace before the colon" and wants a space or tab after it; bags before 1.0 may
 * put any whitespace around the colon, and §2.2.2 tells readers to accept it from them.
 */
export function tagFieldProblems(text: string, strict: boolean): { lineNumber: number; reason: string }[] {
  const problems: { lineNumber: number; reason: string }[] = [];
  let inElement = false;
  splitLines(text).forEach((line, index) => {
    const lineNumber = index + 1;
    if (line.trim() === '') return;
    if (/^[ \t]/.test(line)) {
      if (!inElement) problems.push({ lineNumber, reason: 'continues a value, but no element comes before it' });
      return;
    }
    inElement = true;
    const colon = line.indexOf(':');
    if (colon <= 0) problems.push({ lineNumber, reason: 'is not "Label: value"' });
    else if (strict && /[ \t]$/.test(line.slice(0, colon))) problems.push({ lineNumber, reason: 'has whitespace before its colon' });
    else if (strict && colon + 1 < line.length && !/[ \t]/.test(line[colon + 1]!)) problems.push({ lineNumber, reason: 'has no space after its colon' });
  });
  return problems;
}

/** `YYYY-MM-DD` in UTC, the form RFC 8493 suggests for Bagging-Date. */
export function baggingDate(date: Date): string {
  return date.toISOString().slice(0, 10);
}
