import type { Readable } from 'node:stream';
import { FerryError } from '../errors.js';
import { MultiHash, type HashAlgorithm } from '../hashing.js';
import {
  CHECKABLE_ALGORITHMS,
  HEX_DIGITS,
  decodeTagText,
  parseBagDeclaration,
  parseFetch,
  parseManifest,
  parseTagFields,
  tagFieldProblems,
  type BagItVersion,
  type ManifestLine,
} from './bagit-format.js';

// Full validation of an uploaded bag before anything is written, by the rules of RFC 8493
// (BagIt 1.0) and, for a bag that declares an earlier version, by what that version
// allowed (docs/bagit.md has each rule, the exceptions and why). A bag is taken only when
// it is complete and valid (§3): every file every manifest lists is in the ZIP, every
// payload file is listed, every checksum matches. What the RFC tolerates but frowns upon
// is accepted with a warning; everything else is a problem, and one problem refuses the bag.

/** A file of the bag, by its path relative to the bag's root ("data/x.txt", "bagit.txt"). */
export interface BagFile {
  path: string;
  size: number;
  open(): Promise<Readable>;
  /**
   * Desktop litter by its name (.DS_Store, Thumbs.db: the reader's rule). A listed one is
   * payload like any other; an unlisted one was added after bagging, and is left out with
   * a warning instead of failing the bag.
   */
  litter?: boolean;
}

/** payload path relative to data/ → manifest hashes by algorithm (lowercase hex) */
export type BagHashes = Map<string, Record<string, string>>;

export interface ValidatedBag {
  /** the bag's payload, exactly: the files to write (relative to data/) and their manifest hashes */
  hashes: BagHashes;
  /** what was accepted although the RFC frowns upon it, each a sentence naming the file */
  warnings: string[];
}

const MAX_TAG_FILE_BYTES = 256 * 1024 * 1024;
const PROBLEMS_SHOWN = 5;
/** the earliest BagIt version whose rules Ferry knows (the first the LoC suite has) */
const OLDEST: BagItVersion = { major: 0, minor: 93 };
/** what the upload job's fixity check computes on every byte it writes (jobs/entry-stream.ts) */
const CHECKED_BY_JOB: ReadonlySet<string> = new Set<HashAlgorithm>(['md5', 'sha1', 'sha256', 'sha512']);

export interface ValidateBagOptions {
  /**
   * 'defer': the payload's bytes are not read here (structure, manifests and tag files still
   * are); the caller checks every payload file against the returned hashes as it writes, and
   * puts nothing in place unless all match (the upload job's staged write). Digests the job
   * does not compute (sha224, sha384) are still checked here.
   */
  payload?: 'check' | 'defer';
}

export async function validateBag(files: BagFile[], options: ValidateBagOptions = {}): Promise<ValidatedBag> {
  const bag = await openBag(files);
  const toFetch = await readFetchList(bag);
  const { expected, listedBy } = await readPayloadManifests(bag, toFetch);
  const kept = payloadToKeep(bag, listedBy);
  await checkBagInfo(bag, kept);
  // Structure first: no point hashing gigabytes of a bag that is already known to be wrong.
  failIfAny(bag.problems);
  const hashes = await checkPayload(bag, kept, expected, options);
  await checkTagManifests(bag);
  failIfAny(bag.problems);
  return { hashes, warnings: bag.warnings.list() };
}

/** A bag being read: its files, its declaration's rules, and what was found so far. */
interface Bag {
  files: BagFile[];
  byPath: Map<string, BagFile>;
  payload: BagFile[];
  payloadPaths: Set<string>;
  /** BagIt 1.0's rules, or an earlier version's where they differ (RFC 8493 §2.2.2, §3) */
  v1: boolean;
  problems: string[];
  warnings: Warnings;
  resolver: PathResolver;
  /** a tag file's text in the declared encoding; null (and a problem) when it is not valid in it */
  readTag(file: BagFile): Promise<string | null>;
}

/** bagit.txt first: without a valid declaration nothing else can even be decoded. */
async function openBag(files: BagFile[]): Promise<Bag> {
  const byPath = new Map(files.map((file) => [file.path, file]));
  const bagit = byPath.get('bagit.txt');
  if (!bagit) fail(['it has no bagit.txt (RFC 8493 §2.1.1)']);
  const parsed = parseBagDeclaration(await readBytes(bagit));
  if (parsed.problems) fail(parsed.problems);
  const { version, encoding } = parsed.declaration;
  if (before(version, OLDEST) || version.major > 1) {
    fail([`bagit.txt declares BagIt-Version ${version.major}.${version.minor}; Ferry reads bags of versions 0.93 to 1.0`]);
  }
  const problems: string[] = [];
  const warnings = new Warnings();
  const payload = files.filter((file) => file.path.startsWith('data/'));
  const payloadPaths = new Set(payload.map((file) => file.path));
  return {
    files,
    byPath,
    payload,
    payloadPaths,
    v1: version.major >= 1,
    problems,
    warnings,
    resolver: new PathResolver(payloadPaths, warnings),
    async readTag(file) {
      const decoded = decodeTagText(await readBytes(file), encoding);
      if ('error' in decoded) {
        problems.push(`${file.path} ${decoded.error}`);
        return null;
      }
      if (decoded.bom && /^utf-?8$/i.test(encoding.trim())) warnings.add(`${file.path} starts with a byte-order mark, which UTF-8 tag files should not have; read without it`);
      return decoded.text;
    },
  };
}

/** fetch.txt (RFC 8493 §2.2.3): payload path → where it would be fetched from. */
async function readFetchList(bag: Bag): Promise<Map<string, { url: string; line: number }>> {
  const toFetch = new Map<string, { url: string; line: number }>();
  const fetch = bag.byPath.get('fetch.txt');
  const text = fetch ? await bag.readTag(fetch) : null;
  if (text === null) return toFetch;
  const { lines, malformed } = parseFetch(text, { percent: bag.v1 });
  for (const lineNumber of malformed) bag.problems.push(`fetch.txt line ${lineNumber} is not "<url> <length or -> <path>" (RFC 8493 §2.2.3)`);
  for (const line of lines) {
    const where = bag.resolver.resolve(line.path, 'fetch.txt', line.lineNumber);
    if (where === null || !where.startsWith('data/')) {
      bag.problems.push(`fetch.txt line ${line.lineNumber} would fetch ${JSON.stringify(line.path)} to outside the bag's data/ folder (RFC 8493 §2.2.3: it lists payload files only)`);
    } else if (!/^[A-Za-z][A-Za-z0-9+.-]*:/.test(line.url)) {
      bag.problems.push(`fetch.txt line ${line.lineNumber} gives ${JSON.stringify(line.url.slice(0, 80))}, which is not an absolute URL (RFC 8493 §2.2.3)`);
    } else {
      toFetch.set(where, { url: line.url, line: line.lineNumber });
    }
  }
  return toFetch;
}

/**
 * The payload manifests (RFC 8493 §2.1.3): the hashes each payload file must have, and
 * which files each manifest lists. Every listed file must be in the ZIP (§3); one that
 * fetch.txt lists is named as still to be fetched.
 */
async function readPayloadManifests(bag: Bag, toFetch: Map<string, { url: string; line: number }>): Promise<{ expected: BagHashes; listedBy: Map<string, Set<string>> }> {
  const expected: BagHashes = new Map();
  const listedBy = new Map<string, Set<string>>();
  /** listed but not in the ZIP → the manifest that lists it */
  const absent = new Map<string, string>();
  const manifests = bag.files.filter((file) => /^manifest-[^/]+\.txt$/.test(file.path));
  if (manifests.length === 0) bag.problems.push('it has no manifest-<algorithm>.txt (RFC 8493 §2.1.3)');
  const algorithms = new Map<string, string>();
  for (const manifest of manifests) {
    const algorithm = algorithmOf(manifest.path, 'manifest-', bag.problems, algorithms);
    const text = algorithm ? await bag.readTag(manifest) : null;
    if (algorithm === null || text === null) continue;
    const listed = new Set<string>();
    listedBy.set(manifest.path, listed);
    for (const line of readManifestLines(manifest.path, algorithm, text, bag.v1, bag.problems)) {
      const where = bag.resolver.resolve(line.path, manifest.path, line.lineNumber);
      if (where === null || !where.startsWith('data/')) {
        bag.problems.push(`${manifest.path} line ${line.lineNumber} lists ${JSON.stringify(line.path)}, which is outside the bag's data/ folder (RFC 8493 §2.1.3)`);
        continue;
      }
      if (!bag.payloadPaths.has(where)) {
        absent.set(where, manifest.path);
        continue;
      }
      const hashes = expected.get(where) ?? {};
      expected.set(where, hashes);
      if (listed.has(where)) {
        listedTwice(bag, manifest.path, where, hashes[algorithm] === line.hex);
        continue;
      }
      listed.add(where);
      hashes[algorithm] = line.hex;
    }
  }
  for (const [path, manifest] of absent) {
    const fetchable = toFetch.get(path);
    if (fetchable) {
      bag.problems.push(
        `${path} is to be fetched from ${fetchable.url.slice(0, 120)} (fetch.txt line ${fetchable.line}) and is not in the ZIP; ` +
          'Ferry takes only complete bags (RFC 8493 §3): fetch the files into the bag, then upload it',
      );
    } else {
      bag.problems.push(`${manifest} lists ${path}, which is not in the bag's payload`);
    }
  }
  for (const [path, fetched] of toFetch) {
    for (const [manifest, listed] of listedBy) {
      if (!listed.has(path) && !absent.has(path)) bag.problems.push(`fetch.txt line ${fetched.line} lists ${path}, which ${manifest} does not (RFC 8493 §2.2.3: every manifest lists what is fetched)`);
    }
  }
  return { expected, listedBy };
}

/** A path listed twice must not say two things (the last line would silently win); the same thing twice is refused from 1.0 on. */
function listedTwice(bag: Bag, manifest: string, path: string, sameChecksum: boolean): void {
  if (!sameChecksum) bag.problems.push(`${manifest} lists ${path} twice, with different checksums`);
  else if (bag.v1) bag.problems.push(`${manifest} lists ${path} twice; a BagIt 1.0 manifest lists each file once`);
  else bag.warnings.add(`${manifest} lists ${path} more than once (with the same checksum)`);
}

/**
 * Every payload file listed: in every manifest from 1.0 on (RFC 8493 §3), in one at least
 * before. Unlisted desktop litter is left out (with a warning) instead; the rest is kept.
 */
function payloadToKeep(bag: Bag, listedBy: Map<string, Set<string>>): BagFile[] {
  const kept: BagFile[] = [];
  for (const file of bag.payload) {
    const missingFrom = [...listedBy].filter(([, listed]) => !listed.has(file.path)).map(([manifest]) => manifest);
    if (missingFrom.length === listedBy.size && file.litter) {
      bag.warnings.add(`${file.path} is desktop litter that no manifest lists (added after the bag was made); it is left out`);
      continue;
    }
    kept.push(file);
    if (listedBy.size === 0) continue;
    if (bag.v1) for (const manifest of missingFrom) bag.problems.push(`${file.path} is not listed in ${manifest}`);
    else if (missingFrom.length === listedBy.size) bag.problems.push(`${file.path} is not listed in any payload manifest`);
  }
  return kept;
}

/** bag-info.txt's lines (RFC 8493 §2.2.2), and its Payload-Oxum against the payload kept. */
async function checkBagInfo(bag: Bag, kept: BagFile[]): Promise<void> {
  const info = bag.byPath.get('bag-info.txt');
  const text = info ? await bag.readTag(info) : null;
  if (text === null) return;
  for (const { lineNumber, reason } of tagFieldProblems(text, bag.v1)) bag.problems.push(`bag-info.txt line ${lineNumber} ${reason} (RFC 8493 §2.2.2)`);
  const oxum = parseTagFields(text).get('Payload-Oxum')?.[0];
  const bytes = kept.reduce((sum, file) => sum + file.size, 0);
  if (oxum === undefined) return;
  if (!/^[0-9]+\.[0-9]+$/.test(oxum)) bag.problems.push(`bag-info.txt gives Payload-Oxum ${JSON.stringify(oxum)}, not <octets>.<files> (RFC 8493 §2.2.2)`);
  else if (oxum !== `${bytes}.${kept.length}`) bag.problems.push(`bag-info.txt says Payload-Oxum ${oxum}, but the payload holds ${bytes}.${kept.length}`);
}

/** Each kept payload file against its manifest checksums (in 'defer' mode, only those the job will not check). */
async function checkPayload(bag: Bag, kept: BagFile[], expected: BagHashes, options: ValidateBagOptions): Promise<BagHashes> {
  const hashes: BagHashes = new Map();
  for (const file of kept) {
    const wanted = expected.get(file.path) ?? {};
    hashes.set(file.path.slice('data/'.length), wanted);
    const algorithms = Object.keys(wanted).filter((algorithm) => options.payload !== 'defer' || !CHECKED_BY_JOB.has(algorithm));
    if (algorithms.length === 0) continue;
    const actual = await hashFile(file, algorithms);
    for (const algorithm of algorithms) {
      if (actual[algorithm] !== wanted[algorithm]) bag.problems.push(`${file.path} does not match its ${algorithm} checksum in manifest-${algorithm}.txt`);
    }
  }
  return hashes;
}

/** Tag manifests (RFC 8493 §2.2.1): each listed tag file present and matching; no payload files. */
async function checkTagManifests(bag: Bag): Promise<void> {
  const algorithms = new Map<string, string>();
  for (const tagManifest of bag.files.filter((file) => /^tagmanifest-[^/]+\.txt$/.test(file.path))) {
    const algorithm = algorithmOf(tagManifest.path, 'tagmanifest-', bag.problems, algorithms);
    const text = algorithm ? await bag.readTag(tagManifest) : null;
    if (algorithm === null || text === null) continue;
    const listed = new Map<string, string>();
    for (const line of readManifestLines(tagManifest.path, algorithm, text, bag.v1, bag.problems)) {
      const where = bag.resolver.resolve(line.path, tagManifest.path, line.lineNumber);
      const tagFile = where === null ? undefined : bag.byPath.get(where);
      if (where === null || where.startsWith('data/') || !tagFile) {
        const why = where?.startsWith('data/') ? ' (RFC 8493 §2.2.1: a tag manifest lists no payload files)' : '';
        bag.problems.push(`${tagManifest.path} lists ${line.path}, which is not a tag file of the bag${why}`);
        continue;
      }
      if (listed.has(where)) {
        listedTwice(bag, tagManifest.path, where, listed.get(where) === line.hex);
        continue;
      }
      listed.set(where, line.hex);
      if (/^tagmanifest-[^/]+\.txt$/.test(where)) bag.warnings.add(`${tagManifest.path} lists the tag manifest ${where}, which RFC 8493 §2.2.1 says it must not`);
      const actual = await hashFile(tagFile, [algorithm]);
      if (actual[algorithm] !== line.hex) bag.problems.push(`${where} does not match its ${algorithm} checksum in ${tagManifest.path}`);
    }
  }
}

/** The lines of a (tag) manifest, each malformed line or checksum of the wrong length a problem. */
function readManifestLines(name: string, algorithm: Checkable, text: string, v1: boolean, problems: string[]): ManifestLine[] {
  const { lines, malformed } = parseManifest(text, { percent: v1 });
  for (const lineNumber of malformed) problems.push(`${name} line ${lineNumber} is not "<checksum> <path>"`);
  return lines.filter((line) => {
    if (line.hex.length === HEX_DIGITS[algorithm]) return true;
    problems.push(`${name} line ${line.lineNumber} has a checksum of ${line.hex.length} hex digits; ${algorithm} has ${HEX_DIGITS[algorithm]}`);
    return false;
  });
}

type Checkable = (typeof CHECKABLE_ALGORITHMS)[number];

/**
 * `manifest-SHA256.txt` → 'sha256', or null (and a problem) when Ferry cannot check it or
 * another manifest of `seen` already has the algorithm: two would each say what one file's
 * checksum is, and the last read would silently win.
 */
function algorithmOf(path: string, prefix: string, problems: string[], seen: Map<string, string>): Checkable | null {
  const algorithm = path.slice(prefix.length, -'.txt'.length).toLowerCase();
  if (!(CHECKABLE_ALGORITHMS as readonly string[]).includes(algorithm)) {
    problems.push(`${path} uses an algorithm Ferry cannot check (use ${CHECKABLE_ALGORITHMS.join(', ')})`);
    return null;
  }
  const other = seen.get(algorithm);
  if (other !== undefined) {
    problems.push(`${other} and ${path} are both ${algorithm} manifests; a bag has one per algorithm`);
    return null;
  }
  seen.set(algorithm, path);
  return algorithm as Checkable;
}

/**
 * A path as a manifest or fetch.txt writes it → the bag file it names. RFC 8493 §2.1.3:
 * relative to the bag's root, "/" between names. Accepted with a warning, because the
 * file they name is not in doubt: a leading "*" (md5sum's binary-mode mark), "./" and
 * empty segments, and a spelling that differs from the ZIP's only by Unicode
 * normalisation (macOS writes names decomposed, most manifests are composed). Anything
 * that could leave the bag (absolute, "..") resolves to null.
 */
class PathResolver {
  /** NFC spelling → the payload paths with it, for the normalisation fallback */
  private readonly composed = new Map<string, string[]>();

  constructor(
    private readonly payload: ReadonlySet<string>,
    private readonly warnings: Warnings,
  ) {
    for (const path of payload) this.composed.set(path.normalize('NFC'), [...(this.composed.get(path.normalize('NFC')) ?? []), path]);
  }

  resolve(written: string, source: string, lineNumber: number): string | null {
    let path = written;
    if (path.startsWith('*')) {
      path = path.slice(1);
      this.warnings.add(`${source} marks paths with "*" as md5sum does (line ${lineNumber} first); read without it`);
    }
    if (path.startsWith('/') || /^[A-Za-z]:/.test(path)) return null;
    const segments = path.split('/');
    if (segments.includes('..')) return null;
    const plain = segments.filter((segment) => segment !== '' && segment !== '.').join('/');
    if (plain !== path) this.warnings.add(`${source} writes paths with "./" or "//" (line ${lineNumber} first: ${JSON.stringify(path)}); read as plain relative paths`);
    if (this.payload.has(plain) || !plain.startsWith('data/')) return plain;
    const same = this.composed.get(plain.normalize('NFC')) ?? [];
    if (same.length !== 1) return plain;
    this.warnings.add(`${source} spells names in another Unicode normalisation form than the ZIP (line ${lineNumber} first: ${same[0]}); taken as the ZIP's files`);
    return same[0]!;
  }
}

/** Warnings, each said once however many lines it applies to (the first line is named). */
class Warnings {
  private readonly said = new Map<string, string>();

  add(sentence: string): void {
    const key = sentence.replace(/\(line [0-9]+ first[^)]*\)/, '');
    if (!this.said.has(key)) this.said.set(key, sentence);
  }

  list(): string[] {
    return [...this.said.values()];
  }
}

function before(a: BagItVersion, b: BagItVersion): boolean {
  return a.major < b.major || (a.major === b.major && a.minor < b.minor);
}

function failIfAny(problems: string[]): void {
  if (problems.length > 0) fail(problems);
}

function fail(problems: string[]): never {
  const shown = problems.slice(0, PROBLEMS_SHOWN).join('; ');
  const more = problems.length > PROBLEMS_SHOWN ? ` (and ${problems.length - PROBLEMS_SHOWN} more problems)` : '';
  throw new FerryError(400, 'bad_bag', `The uploaded bag is not valid, so nothing was written: ${shown}${more}.`);
}

async function hashFile(file: BagFile, algorithms: string[]): Promise<Record<string, string>> {
  const multi = new MultiHash(algorithms);
  for await (const chunk of await file.open()) multi.update(chunk as Buffer);
  return multi.digest();
}

async function readBytes(file: BagFile): Promise<Buffer> {
  if (file.size > MAX_TAG_FILE_BYTES) {
    throw new FerryError(413, 'too_large', `The bag's ${file.path} is larger than Ferry reads for a tag file (${MAX_TAG_FILE_BYTES / 1024 ** 2} MiB).`);
  }
  const chunks: Buffer[] = [];
  for await (const chunk of await file.open()) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
