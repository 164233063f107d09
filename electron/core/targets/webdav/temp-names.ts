import { randomBytes } from 'node:crypto';

/**
 * Ferry's temporary upload names. A file is PUT to `.ferry-<stamp>-<random>~<name>` beside
 * its destination and then MOVEd onto `<name>`, so a reader never sees half a file.
 *
 * The name must be one no WebDAV server reserves (docs/targets/webdav.md, "Limits"):
 * - it ends with the destination's own name, so its extension is one the server already
 *   takes for that file; never `.part` or `.filepart`, which Nextcloud ≥ 30 always refuses
 *   (lib/private/Files/FilenameValidator.php) and ownCloud 10 refuses by `\.(part|filepart)$`;
 * - it starts with `.ferry-`: not `.htaccess` (Nextcloud's default forbidden name), not
 *   `.ht*` (Apache's stock `<Files ".ht*">` denial), no leading or trailing space, and its
 *   basename (up to the second dot) is no reserved word such as `CON` or `NUL`;
 * - the characters added are `[0-9a-z-~]`: none of Nextcloud's forbidden or Windows-
 *   compatibility characters (`\ / < > : " | ? *`, control characters);
 * - it is at most 250 UTF-8 bytes, Nextcloud's limit: a long name keeps its tail (and so
 *   its extension).
 * `<stamp>` is when the upload began (base-36 ms), so a later write can tell an abandoned
 * temp file from one a running upload still owns (see isAbandoned).
 */
const PREFIX = '.ferry-';
const PATTERN = /^\.ferry-([0-9a-z]{1,11})-([0-9a-f]{8})~/;
/**
 * The name Ferry used before (`.<name>.ferry-<12 hex>.part`): such files, left by failed or
 * cancelled uploads of earlier versions (issue #17.3), are Ferry's own too — hidden, and
 * swept once their bytes have not changed for an hour.
 */
const LEGACY = /^\..+\.ferry-[0-9a-f]{12}\.part$/;
/** Nextcloud refuses names of more than 250 bytes (FilenameValidator: `isset($filename[250])`). */
export const MAX_NAME_BYTES = 250;

export function tempNameFor(name: string, now = Date.now(), random = randomBytes(4).toString('hex')): string {
  const head = `${PREFIX}${now.toString(36)}-${random}~`;
  return head + tailWithin(name, MAX_NAME_BYTES - Buffer.byteLength(head));
}

/** Whether `name` is one of Ferry's temporary names: never listed, and swept when abandoned. */
export function isFerryTempName(name: string): boolean {
  return PATTERN.test(name) || LEGACY.test(name);
}

/**
 * A temp name whose upload began more than an hour ago and whose bytes have not changed for
 * ten minutes belongs to no running upload: an upload's longest pause is its timeout (60 s
 * by default), and a server that writes a PUT in place touches the file as bytes arrive.
 * (A server that applied X-OC-MTime shows the source's old time, but only for the moment
 * between the PUT's answer and the MOVE.)
 */
export function isAbandoned(name: string, lastModified: Date | null, now = Date.now()): boolean {
  const touched = lastModified && !Number.isNaN(lastModified.getTime()) ? lastModified.getTime() : 0;
  if (LEGACY.test(name)) return now - touched > 60 * 60_000;
  const match = PATTERN.exec(name);
  if (!match) return false;
  const began = parseInt(match[1] as string, 36);
  return now - began > 60 * 60_000 && now - touched > 10 * 60_000;
}

/** The longest tail of `name` within `bytes` UTF-8 bytes, cut between characters. */
function tailWithin(name: string, bytes: number): string {
  if (Buffer.byteLength(name) <= bytes) return name;
  const chars = [...name];
  let tail = '';
  for (let i = chars.length - 1; i >= 0; i--) {
    const next = (chars[i] as string) + tail;
    if (Buffer.byteLength(next) > bytes) break;
    tail = next;
  }
  return tail;
}
