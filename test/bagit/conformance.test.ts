// The Library of Congress BagIt conformance suite through Ferry's real upload path: each
// bag folder zipped (as a person would upload it) and opened by openUploadZip, which
// validates a bag before anything is written. Each bag must come out as the suite
// classifies it, or be one of the exceptions below, each argued from RFC 8493 and listed
// in docs/bagit.md. The reasons are checked too: a bag refused for the wrong reason would
// pass a bare "refused" by accident.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isFerryError } from '../../electron/core/errors.js';
import { DEFAULT_LIMITS } from '../../electron/core/limits.js';
import { openUploadZip } from '../../electron/core/bag/upload-reader.js';
import { filesOf, suiteBags, suiteMissing, zipBag, type SuiteBag, type SuiteClass } from './suite.js';

type Outcome = { kind: 'bag'; warnings: string[]; files: Map<string, Buffer> } | { kind: 'plain' } | { kind: 'refused'; message: string };

/** Bags Ferry deliberately classifies otherwise than the suite (docs/bagit.md, "Exceptions"). */
const EXCEPTIONS: Record<string, { ferry: Outcome['kind']; why: string }> = {
  'v0.97/invalid/missing-bagit.txt': {
    ferry: 'plain',
    why:
      'No bagit.txt means no bag (RFC 8493 §2.1.1 makes the declaration what identifies one), and Ferry takes plain ZIPs: ' +
      'its files are written as the plain files they are, manifests included, and nothing claims they were a valid bag.',
  },
};

/** What each refusal or warning must be about (a regex over the message or the warnings). */
const REASONS: Record<string, RegExp> = {
  'v0.97/invalid/baginfo-missing-encoding': /no Tag-File-Character-Encoding line/,
  'v0.97/invalid/bom-in-bagit.txt': /bagit\.txt starts with a byte-order mark/,
  // its bytes changed size too, and the Payload-Oxum says so before any hashing
  'v0.97/invalid/corrupt-data-file': /Payload-Oxum 58\.2, but the payload holds 66\.2/,
  'v0.97/invalid/corrupt-tag-file': /does not match its md5 checksum in tagmanifest-md5\.txt/,
  'v0.97/invalid/extra-file-in-bag': /data\/bar is not listed in any payload manifest/,
  'v0.97/invalid/invalid-version-number': /BagIt-Version "\.97", which is not a version number M\.N/,
  'v0.97/invalid/missing-baginfo': /tagmanifest-md5\.txt lists bag-info\.txt, which is not a tag file of the bag/,
  'v0.97/invalid/out-of-scope-file-paths-using-dot-notation': /lists "\.\.\/\.\.\/\.\.\/README\.md", which is outside the bag's data\/ folder/,
  'v0.97/invalid/out-of-scope-file-paths-using-dot-notation-for-fetch': /fetch\.txt line 1 would fetch "\.\.\/\.\.\/\.\.\/README\.md" to outside/,
  'v0.97/invalid/same-filename-listed-twice-with-different-hashes': /lists data\/README twice, with different checksums/,
  'v0.97/linux-only/out-of-scope-file-paths-using-absolute-path': /lists "\/tmp\/foo", which is outside/,
  'v0.97/linux-only/out-of-scope-file-paths-using-absolute-path-for-fetch': /would fetch "\/tmp\/test\.txt" to outside/,
  'v0.97/linux-only/out-of-scope-file-paths-using-shortcut': /lists "~\/foo", which is outside/,
  'v0.97/linux-only/out-of-scope-file-paths-using-shortcut-for-fetch': /would fetch "~\/test\.txt" to outside/,
  'v0.97/linux-only/out-of-scope-file-paths-using-shortcut-username': /lists "~root\/foo", which is outside/,
  'v0.97/linux-only/out-of-scope-file-paths-using-shortcut-username-for-fetch': /would fetch "~root\/foo" to outside/,
  'v0.97/windows-only/out-of-scope-file-paths-using-absolute-path': /lists "C:\\\\Windows\\\\System32\\\\setx\.exe", which is outside/,
  'v0.97/windows-only/out-of-scope-file-paths-using-absolute-path-for-fetch': /would fetch "C:\\\\Windows.*" to outside/,
  'v0.97/windows-only/out-of-scope-file-paths-using-shortcut': /lists "%HomeDrive%.*", which is outside/,
  'v0.97/windows-only/out-of-scope-file-paths-using-shortcut-for-fetch': /would fetch "%HomeDrive%.*" to outside/,
  'v0.97/windows-only/out-of-scope-file-paths-using-unc': /lists "\\\\\\\\\?\\\\UNC.*", which is outside/,
  'v0.97/windows-only/out-of-scope-file-paths-using-unc-for-fetch': /would fetch "\\\\\\\\\?\\\\UNC.*" to outside/,
  'v1.0/invalid/bagit-with-invalid-whitespace': /bagit\.txt line 1 is "BagIt-Version : 1\.0", but RFC 8493 §2\.1\.1 wants "BagIt-Version: …" there \(no space before the colon/,
  'v1.0/invalid/notAllManifestsListAllFiles': /data\/missingFromManifest\.txt is not listed in manifest-sha512\.txt/,
  'v1.0/invalid/same-filename-listed-twice-with-different-hashes': /bagit\.txt line 1 is "BagIt-Version: 1\.0 "/,
  'v1.0/invalid/same-filename-listed-twice-with-the-same-hash': /manifest-sha256\.txt lists data\/README twice; a BagIt 1\.0 manifest lists each file once/,
  // warnings: accepted with these, or refused for these reasons
  'v0.97/warning/duplicate-file-with-different-case': /lists data\/HELLO\.txt, which is not in the bag's payload/,
  'v0.97/warning/made-with-md5sum-tools': /marks paths with "\*" as md5sum does/,
  'v0.97/warning/relative-path': /writes paths with "\.\/"/,
  'v0.97/warning/same-filename-listed-twice-with-different-normalization': /another Unicode normalisation form/,
  'v0.97/warning/same-filename-listed-twice-with-the-same-hash': /lists data\/README more than once/,
  'v0.97/warning/special-system-files': /lists data\/\.DS_Store, which is not in the bag's payload/,
  // valid, with a warning on the way
  'v0.96/valid/bag-with-leading-dot-slash-in-manifest': /writes paths with "\.\/"/,
  'v0.97/valid/bag-with-leading-dot-slash-in-manifest': /writes paths with "\.\/"/,
};

const missing = suiteMissing();
if (missing) console.log(`Skipping the BagIt conformance suite: ${missing}.`);

describe.skipIf(missing !== null)('LoC BagIt conformance suite, through the upload reader', async () => {
  const bags = missing ? [] : await suiteBags();
  let work: string;
  const rows: string[] = [];
  beforeAll(async () => {
    work = await mkdtemp(path.join(tmpdir(), 'ferry-bagit-suite-'));
  });
  afterAll(async () => {
    // the table docs/bagit.md reproduces
    console.log(['bag | suite | Ferry', ...rows.sort()].join('\n'));
    await rm(work, { recursive: true, force: true });
  });

  it('has the bags this test was written against', () => {
    expect(bags.length).toBe(60);
  });

  it.each(bags.map((bag) => [bag.name, bag] as const))('%s', async (_, bag: SuiteBag) => {
    const outcome = await upload(bag, work);
    const exception = EXCEPTIONS[bag.name];
    rows.push(`${bag.name} | ${bag.expected} | ${summary(outcome)}${exception ? ' (exception)' : ''}`);
    if (exception) expect(outcome.kind, exception.why).toBe(exception.ferry);
    else expect(classOf(outcome), summary(outcome)).toSatisfy((ferry: SuiteClass | 'valid+warning') => agrees(bag.expected, ferry));

    const reason = REASONS[bag.name];
    if (reason) expect(outcome.kind === 'refused' ? outcome.message : outcome.kind === 'bag' ? outcome.warnings.join('\n') : '').toMatch(reason);
    else if (outcome.kind === 'bag') expect(outcome.warnings).toEqual([]);

    // nothing lost: an accepted bag hands over exactly the files under data/, byte for byte
    if (outcome.kind === 'bag') {
      const payload = (await filesOf(path.join(bag.dir, 'data'))).sort();
      expect([...outcome.files.keys()].sort()).toEqual(payload);
      for (const file of payload) expect(outcome.files.get(file)!.equals(await readFile(path.join(bag.dir, 'data', file))), file).toBe(true);
    }
  });
});

function agrees(suite: SuiteClass, ferry: SuiteClass | 'valid+warning'): boolean {
  if (suite === 'valid') return ferry === 'valid' || ferry === 'valid+warning';
  if (suite === 'invalid') return ferry === 'invalid';
  return ferry === 'invalid' || ferry === 'valid+warning';
}

function classOf(outcome: Outcome): SuiteClass | 'valid+warning' {
  if (outcome.kind === 'refused') return 'invalid';
  if (outcome.kind === 'plain') return 'valid';
  return outcome.warnings.length > 0 ? 'valid+warning' : 'valid';
}

function summary(outcome: Outcome): string {
  if (outcome.kind === 'refused') return `refused: ${outcome.message}`;
  if (outcome.kind === 'plain') return 'taken as a plain ZIP';
  return outcome.warnings.length > 0 ? `accepted, warning: ${outcome.warnings.join(' / ')}` : 'accepted';
}

async function upload(bag: SuiteBag, work: string): Promise<Outcome> {
  const zipPath = path.join(work, `${bag.name.replace(/\//g, '_')}.zip`);
  await zipBag(bag.dir, zipPath);
  let archive;
  try {
    archive = await openUploadZip(zipPath, DEFAULT_LIMITS);
  } catch (error) {
    if (isFerryError(error) && error.code === 'bad_bag') return { kind: 'refused', message: error.message };
    throw error;
  }
  try {
    if (archive.kind === 'plain') return { kind: 'plain' };
    const files = new Map<string, Buffer>();
    for await (const entry of archive.entries()) {
      if (entry.kind !== 'file') continue;
      const chunks: Buffer[] = [];
      for await (const chunk of await entry.open()) chunks.push(chunk as Buffer);
      files.set(entry.path, Buffer.concat(chunks));
    }
    return { kind: 'bag', warnings: archive.warnings, files };
  } finally {
    await archive.close();
  }
}
