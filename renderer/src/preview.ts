// What the Details panel previews of a file, decided from its name alone, and how its first
// bytes become something to show: plain text (never markup), a table (CSV, TSV), or an image
// with a type Ferry chose (never the bytes' own claim, never inline SVG markup).
import Papa from 'papaparse';

/** Bytes asked for a text or table preview: enough for a screenful, cheap on a remote. */
export const TEXT_PREVIEW_BYTES = 64 * 1024;
/** Bytes asked for an image: the server's most (a larger image is not shown, and says so). */
export const IMAGE_PREVIEW_BYTES = 1024 * 1024;
/** Rows of a table preview. */
export const TABLE_PREVIEW_ROWS = 100;

export type PreviewKind = { kind: 'text' } | { kind: 'table'; delimiter: ',' | '\t' } | { kind: 'image'; mime: string };

const IMAGES: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  svg: 'image/svg+xml',
};

const TEXT_EXTENSIONS = new Set(
  ('txt text md markdown rst json jsonld geojson xml yaml yml toml ini cfg conf log py r rmd jl m do sas sps ' +
    'js ts sh bash c h cpp hpp java go rs tex bib cff html htm css sql nt ttl rdf').split(' '),
);
/** Files people name without an extension that are text all the same. */
const TEXT_NAMES = new Set(['readme', 'license', 'licence', 'citation', 'authors', 'changelog', 'makefile', 'dockerfile', 'notice']);

/** What a file named `title` previews as; null when Ferry does not preview it (its bytes are not asked for). */
export function previewKindOf(title: string): PreviewKind | null {
  const lower = title.toLowerCase();
  const dot = lower.lastIndexOf('.');
  const extension = dot > 0 ? lower.slice(dot + 1) : '';
  if (extension === 'csv') return { kind: 'table', delimiter: ',' };
  if (extension === 'tsv' || extension === 'tab') return { kind: 'table', delimiter: '\t' };
  const image = IMAGES[extension];
  if (image) return { kind: 'image', mime: image };
  if (TEXT_EXTENSIONS.has(extension) || (dot <= 0 && TEXT_NAMES.has(lower))) return { kind: 'text' };
  return null;
}

/**
 * The bytes as text, or null when they are not text (a NUL byte). A cut-off file may end
 * inside a character: that partial character is left out rather than shown as "�".
 */
export function textOf(bytes: Uint8Array, truncated: boolean): string | null {
  if (bytes.includes(0)) return null;
  return new TextDecoder('utf-8').decode(bytes, { stream: truncated });
}

export interface TablePreview {
  rows: string[][];
  /** true when the file has rows beyond those shown */
  more: boolean;
}

/**
 * The first rows of delimited text (the panel shows the first as the column heads, as
 * spreadsheets do). When the bytes were cut off, the last row read may be partial: it is
 * dropped rather than shown short.
 */
export function tableOf(text: string, delimiter: ',' | '\t', truncated: boolean): TablePreview {
  const parsed = Papa.parse<string[]>(text, { delimiter, skipEmptyLines: true, preview: TABLE_PREVIEW_ROWS + 1 });
  const rows = parsed.data;
  // a last row cut by the byte limit only when the parser took every row there was
  if (truncated && rows.length <= TABLE_PREVIEW_ROWS) rows.pop();
  return { rows: rows.slice(0, TABLE_PREVIEW_ROWS), more: truncated || rows.length > TABLE_PREVIEW_ROWS };
}

/**
 * An image's bytes as a data: URL of the type chosen from its name. A data: URL, not a blob:
 * one, because the app's CSP already allows data: images and nothing else; an <img> shows
 * SVG as a picture, its scripts and links dead.
 */
export function imageUrlOf(bytes: Uint8Array, mime: string): string {
  let binary = '';
  const STEP = 0x8000;
  for (let at = 0; at < bytes.length; at += STEP) binary += String.fromCharCode(...bytes.subarray(at, at + STEP));
  return `data:${mime};base64,${btoa(binary)}`;
}
