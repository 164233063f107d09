import type { Readable } from 'node:stream';
import { FerryError } from '../errors.js';
import { MultiHash } from '../hashing.js';
import { CHECKABLE_ALGORITHMS, parseManifest, parseTagFields } from './bagit-format.js';

// Full validation of an uploaded bag (RFC 8493 §3) before anything is written: every
// manifest line against the payload bytes (one pass for all algorithms), every payload
// file in every manifest, nothing listed missing, tag manifests too, Payload-Oxum if given.

/** A file of the bag, by its path relative to the bag's root ("data/x.txt", "bagit.txt"). */
export interface BagFile {
  path: string;
  size: number;
  open(): Promise<Readable>;
}

/** payload path relative to data/ → manifest hashes by algorithm (lowercase hex) */
export type BagHashes = Map<string, Record<string, string>>;

const MAX_TAG_FILE_BYTES = 256 * 1024 * 1024;
const PROBLEMS_SHOWN = 5;

export interface ValidateBagOptions {
  /**
   * 'defer': the payload's bytes are not read here (structure, manifests and tag files still
   * are); the caller checks every payload file against the returned hashes as it writes, and
   * puts nothing in place unless all match (the upload job's staged write).
   */
  payload?: 'check' | 'defer';
}

export async function validateBag(files: BagFile[], options: ValidateBagOptions = {}): Promise<BagHashes> {
  const byPath = new Map(files.map((file) => [file.path, file]));
  const payload = files.filter((file) => file.path.startsWith('data/'));
  const problems: string[] = [];

  const bagit = byPath.get('bagit.txt');
  if (bagit) {
    const fields = parseTagFields(await readText(bagit));
    if (!fields.has('BagIt-Version')) problems.push('bagit.txt has no BagIt-Version line');
  }
  const fetch = byPath.get('fetch.txt');
  if (fetch && (await readText(fetch)).trim() !== '') {
    problems.push('fetch.txt lists files to download; Ferry accepts only complete bags');
  }

  // manifests: which hash each payload file must have
  const expected: BagHashes = new Map(payload.map((file) => [file.path.slice('data/'.length), {}]));
  const manifests = files.filter((file) => /^manifest-[^/]+\.txt$/.test(file.path));
  if (manifests.length === 0) problems.push('it has no manifest-<algorithm>.txt');
  for (const manifest of manifests) {
    const algorithm = manifest.path.slice('manifest-'.length, -'.txt'.length).toLowerCase();
    if (!isCheckable(algorithm)) {
      problems.push(`${manifest.path} uses an algorithm Ferry cannot check (use md5, sha1, sha256 or sha512)`);
      continue;
    }
    const { lines, malformed } = parseManifest(await readText(manifest));
    for (const lineNumber of malformed) problems.push(`${manifest.path} line ${lineNumber} is not "<checksum> <path>"`);
    const listed = new Set<string>();
    for (const line of lines) {
      const relative = line.path.startsWith('data/') ? line.path.slice('data/'.length) : null;
      const hashes = relative === null ? undefined : expected.get(relative);
      if (!hashes) {
        problems.push(`${manifest.path} lists ${line.path}, which is not in the bag's payload`);
        continue;
      }
      // a path listed twice must not say two things: the last line would silently win
      if (listed.has(line.path) && hashes[algorithm] !== line.hex) {
        problems.push(`${manifest.path} lists ${line.path} twice, with different checksums`);
        continue;
      }
      listed.add(line.path);
      hashes[algorithm] = line.hex;
    }
    for (const file of payload) if (!listed.has(file.path)) problems.push(`${file.path} is not listed in ${manifest.path}`);
  }

  const info = byPath.get('bag-info.txt');
  const oxum = info ? parseTagFields(await readText(info)).get('Payload-Oxum')?.[0] : undefined;
  if (oxum !== undefined) {
    const bytes = payload.reduce((sum, file) => sum + file.size, 0);
    if (oxum !== `${bytes}.${payload.length}`) problems.push(`bag-info.txt says Payload-Oxum ${oxum}, but the payload holds ${bytes}.${payload.length}`);
  }
  // Structure first: no point hashing gigabytes of a bag that is already known to be wrong.
  failIfAny(problems);

  for (const file of options.payload === 'defer' ? [] : payload) {
    const wanted = expected.get(file.path.slice('data/'.length))!;
    const actual = await hashFile(file, Object.keys(wanted));
    for (const [algorithm, hex] of Object.entries(wanted)) {
      if (actual[algorithm] !== hex) problems.push(`${file.path} does not match its ${algorithm} checksum in manifest-${algorithm}.txt`);
    }
  }

  for (const tagManifest of files.filter((file) => /^tagmanifest-[^/]+\.txt$/.test(file.path))) {
    const algorithm = tagManifest.path.slice('tagmanifest-'.length, -'.txt'.length).toLowerCase();
    if (!isCheckable(algorithm)) {
      problems.push(`${tagManifest.path} uses an algorithm Ferry cannot check (use md5, sha1, sha256 or sha512)`);
      continue;
    }
    const { lines, malformed } = parseManifest(await readText(tagManifest));
    for (const lineNumber of malformed) problems.push(`${tagManifest.path} line ${lineNumber} is not "<checksum> <path>"`);
    for (const line of lines) {
      const tagFile = byPath.get(line.path);
      if (!tagFile || line.path.startsWith('data/')) {
        problems.push(`${tagManifest.path} lists ${line.path}, which is not a tag file of the bag`);
        continue;
      }
      const actual = await hashFile(tagFile, [algorithm]);
      if (actual[algorithm] !== line.hex) problems.push(`${line.path} does not match its ${algorithm} checksum in ${tagManifest.path}`);
    }
  }
  failIfAny(problems);
  return expected;
}

function isCheckable(algorithm: string): boolean {
  return (CHECKABLE_ALGORITHMS as readonly string[]).includes(algorithm);
}

function failIfAny(problems: string[]): void {
  if (problems.length === 0) return;
  const shown = problems.slice(0, PROBLEMS_SHOWN).join('; ');
  const more = problems.length > PROBLEMS_SHOWN ? ` (and ${problems.length - PROBLEMS_SHOWN} more problems)` : '';
  throw new FerryError(400, 'bad_bag', `The uploaded bag is not valid, so nothing was written: ${shown}${more}.`);
}

async function hashFile(file: BagFile, algorithms: string[]): Promise<Record<string, string>> {
  const multi = new MultiHash(algorithms);
  for await (const chunk of await file.open()) multi.update(chunk as Buffer);
  return multi.digest();
}

async function readText(file: BagFile): Promise<string> {
  if (file.size > MAX_TAG_FILE_BYTES) {
    throw new FerryError(413, 'too_large', `The bag's ${file.path} is larger than Ferry reads for a tag file (${MAX_TAG_FILE_BYTES / 1024 ** 2} MiB).`);
  }
  const chunks: Buffer[] = [];
  for await (const chunk of await file.open()) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
