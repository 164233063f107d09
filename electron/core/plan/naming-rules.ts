// What a destination forbids in the names it stores, declared once by each target
// (Target.namingRules) from the evidence in docs/targets/*.md, and judged here for every
// write (plan/write-plan.ts) and every name a person gives (operations/names.ts). A rule a
// service would answer mid-write — or, worse, silently apply — is refused before the first
// request instead.

/** A target's naming rules; every field optional, comparisons of names ignore case. */
export interface NamingRules {
  /** characters no file or folder name may hold */
  forbiddenCharacters?: string;
  /** characters no file name may hold (folders: see `folderPath`) */
  forbiddenFileCharacters?: string;
  /** names refused as a file or folder anywhere in a path (".git", ".htaccess") */
  reservedNames?: readonly string[];
  /** beginnings no name may have (Apache's stock denial of ".ht*") */
  reservedPrefixes?: readonly string[];
  /** names refused whatever extension follows their first dot (Windows' CON, NUL, COM1 …) */
  reservedBasenames?: readonly string[];
  /** endings no file name may have (".part") */
  forbiddenExtensions?: readonly string[];
  /** no name may end in "." or " " (Windows drops them, so two names would become one) */
  noTrailingDotOrSpace?: boolean;
  /** the longest name in UTF-8 bytes, where shorter than the 255 every writer keeps to */
  maxNameBytes?: number;
  /**
   * A rule on a file's whole folder path, where the service keeps it as one label (Dataverse's
   * `directoryLabel`): `problem` gives the reason for a path it refuses or would change.
   */
  folderPath?: (folder: string) => string | null;
  /**
   * The service keeps no folders inside a record: a path below the record is stored as one
   * name, its segments joined by this (Zenodo, figshare, InvenioRDM: `raw/a.csv` → `raw__a.csv`).
   */
  flattenWith?: string;
  /** the one place that says why (e.g. "docs/targets/webdav.md, Limits"), for the docs table */
  evidence: string;
}

/** The core's limit on one name, what file systems allow (as the ZIP policy). */
export const MAX_NAME_BYTES = 255;

/** Why `name` (one segment; a file's when `kind` is 'file') breaks `rules`, as the rest of a sentence, or null. */
export function namingProblem(rules: NamingRules | undefined, name: string, kind: 'file' | 'folder'): string | null {
  if (!rules) return null;
  const lower = name.toLowerCase();
  const forbidden = [...(rules.forbiddenCharacters ?? ''), ...(kind === 'file' ? (rules.forbiddenFileCharacters ?? '') : '')];
  const character = forbidden.find((c) => name.includes(c));
  if (character !== undefined) return `it contains '${character}'`;
  if (rules.reservedNames?.some((reserved) => reserved.toLowerCase() === lower)) return `'${name}' is a reserved name there`;
  const prefix = rules.reservedPrefixes?.find((start) => lower.startsWith(start.toLowerCase()));
  if (prefix !== undefined) return `names beginning '${prefix}' are refused there`;
  const base = lower.split('.')[0]!;
  if (rules.reservedBasenames?.some((reserved) => reserved.toLowerCase() === base)) return `'${name.split('.')[0]}' is a reserved name there, with any extension`;
  if (kind === 'file') {
    const ending = rules.forbiddenExtensions?.find((extension) => lower.endsWith(extension.toLowerCase()));
    if (ending !== undefined) return `files ending '${ending}' are refused there`;
  }
  if (rules.noTrailingDotOrSpace && /[. ]$/.test(name)) return 'it ends in a dot or a space, which is dropped there';
  const limit = Math.min(rules.maxNameBytes ?? MAX_NAME_BYTES, MAX_NAME_BYTES);
  if (Buffer.byteLength(name, 'utf8') > limit) return `it is longer than ${limit} bytes`;
  return null;
}

/** Windows' reserved device names (Win32 "Naming Files, Paths, and Namespaces"), with any extension. */
export const WINDOWS_RESERVED_BASENAMES: readonly string[] = [
  'CON', 'PRN', 'AUX', 'NUL',
  ...Array.from({ length: 9 }, (_, i) => `COM${i + 1}`),
  ...Array.from({ length: 9 }, (_, i) => `LPT${i + 1}`),
];

/** Characters Windows does not allow in a name (the same page); '\' and '/' are the core's. */
export const WINDOWS_FORBIDDEN_CHARACTERS = '<>:"|?*';
