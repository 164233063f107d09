// Issue #17: the public hostile ZIP corpus (../shared/reference/zip-corpus: zip-slip samples,
// Go's and CPython's ZIP test data, libarchive's ZIP tests, zip bombs), every file through
// BOTH the upload path (POST, the job, the local writer) and the offline library (listed,
// then transferred and downloaded). Each must be refused cleanly (a 4xx-class sentence or a
// failed job with one, nothing written) or written exactly as `unzip` extracts it. Anything
// else fails the test. A table per family is printed (FERRY_CORPUS_TABLE=path also writes it).
import { execFile } from 'node:child_process';
import { isUtf8 } from 'node:buffer';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { lstat, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import yauzl from 'yauzl';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job, ResourceDetail, ResourceSummary } from '../../shared/api.js';
import { encodeLocalId } from '../../electron/core/targets/local/ids.js';
import { LocalTarget } from '../../electron/core/targets/local/local-target.js';
import { createOfflineTarget } from '../../electron/core/targets/offline/index.js';
import { snapshotTree, startFerry, uploadForm, waitForJob, type Ferry } from '../api/harness.js';
import { filesUnder, sentenceProblem } from '../stress/hostile-zips/checks.js';

const CORPUS = path.resolve('../shared/reference/zip-corpus/hostile');
const present = existsSync(CORPUS);
if (!present) console.log(`zip corpus: skipped, ${CORPUS} is not on this machine (see the issue #17 notes for where it comes from)`);

const run = promisify(execFile);

interface CorpusFile {
  family: string;
  name: string;
  bytes: Buffer;
}

type Verdict = 'refused' | 'accepted-exactly' | 'anything else';

/** Ferry's desktop litter (entry-policy.ts): never written, so not compared either. */
const LITTER = /(^|\/)(__MACOSX(\/|$)|\.ds_store$|thumbs\.db$|desktop\.ini$)/i;

async function loadCorpus(): Promise<CorpusFile[]> {
  const files: CorpusFile[] = [];
  for (const family of (await readdir(CORPUS)).sort()) {
    const dir = path.join(CORPUS, family);
    for (const name of (await readdir(dir)).sort()) {
      if (name.endsWith('.md')) continue;
      const raw = await readFile(path.join(dir, name));
      files.push({ family, name: name.replace(/\.gz$/, ''), bytes: name.endsWith('.gz') ? gunzipSync(raw) : raw });
    }
  }
  return files;
}

/**
 * What `unzip` extracts (regular files: path → sha256), or null when it extracts nothing at
 * all. unzip writes a name without the UTF-8 flag as bytes that are not UTF-8: the archive's
 * own (CP437, as Ferry reads them: entry-name.ts), or for an archive made on MS-DOS
 * translated to ISO-8859-1 (Info-ZIP's OEM-to-ISO conversion). Both readings are returned
 * (`latin1` differs only when such a name was met; `rawNames` counts those).
 */
async function unzipped(file: string, scratch: string, rawNames: { count: number }): Promise<{ cp437: Record<string, string>; latin1: Record<string, string> } | null> {
  const out = await mkdtemp(path.join(scratch, 'unzip-'));
  // -qq quiet, -o no overwriting prompts, an empty password; at most 30 s
  await run('unzip', ['-qq', '-o', '-P', '', file, '-d', out], { timeout: 30_000, maxBuffer: 1 << 20 }).catch(() => undefined);
  const cp437: Record<string, string> = {};
  const latin1: Record<string, string> = {};
  let anything = false;
  const walk = async (dir: Buffer, prefix: [string, string]): Promise<void> => {
    for (const raw of await readdir(dir, { encoding: 'buffer' })) {
      anything = true;
      const full = Buffer.concat([dir, Buffer.from('/'), raw]);
      const utf8 = isUtf8(raw);
      if (!utf8) rawNames.count++;
      const names: [string, string] = utf8 ? [raw.toString('utf8'), raw.toString('utf8')] : [yauzl.getFileNameLowLevel(0, raw, [], true), raw.toString('latin1')];
      const relative: [string, string] = prefix[0] ? [`${prefix[0]}/${names[0]}`, `${prefix[1]}/${names[1]}`] : names;
      const info = await lstat(full);
      if (info.isDirectory()) await walk(full, relative);
      else if (info.isFile() && !LITTER.test(relative[0])) {
        const hash = createHash('sha256').update(await readFile(full)).digest('hex');
        cp437[relative[0]] = hash;
        latin1[relative[1]] = hash;
      }
    }
  };
  await walk(Buffer.from(out), ['', '']);
  await rm(out, { recursive: true, force: true });
  return !anything ? null : { cp437, latin1 };
}

function sameFiles(written: Record<string, string>, expected: Record<string, string> | null): string | null {
  if (expected === null) return Object.keys(written).length === 0 ? null : `unzip extracts nothing, Ferry wrote ${Object.keys(written).length} files`;
  const a = Object.keys(written).sort();
  const b = Object.keys(expected).sort();
  if (a.join('\n') !== b.join('\n')) return `Ferry wrote [${a.slice(0, 6).join(', ')}], the reference holds [${b.slice(0, 6).join(', ')}]`;
  const differing = a.filter((p) => written[p] !== expected[p]);
  return differing.length === 0 ? null : `bytes differ from the reference's: ${differing.slice(0, 5).join(', ')}`;
}

const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');

/**
 * Archives unzip cannot read but whose content their corpus documents: Go's reader_test.go
 * reads test-badbase.zip (a wrong directory offset in the end record) as test.zip's two
 * files, test.txt "This is a test text file.\n" and testdata/gophercolor16x16.png.
 */
const DOCUMENTED: Record<string, (scratch: string) => Promise<Record<string, string>>> = {
  'go-archive-zip/test-badbase.zip': async (scratch) => {
    const test = path.join(scratch, 'go-test.zip');
    await writeFile(test, await readFile(path.join(CORPUS, 'go-archive-zip/test.zip')));
    const png = (await run('unzip', ['-p', test, 'gophercolor16x16.png'], { encoding: 'buffer', maxBuffer: 1 << 20 })).stdout;
    return { 'test.txt': sha256('This is a test text file.\n'), 'gophercolor16x16.png': sha256(png) };
  },
};

/** null when what Ferry wrote is what the corpus documents, else what is wrong. */
async function comparedToReference(file: CorpusFile, zipPath: string, written: Record<string, string>, rawNamed: Set<string>): Promise<string | null> {
  const documented = DOCUMENTED[`${file.family}/${file.name}`];
  if (documented) return sameFiles(written, await documented(scratch));
  const raw = { count: 0 };
  const extracted = await unzipped(zipPath, scratch, raw);
  if (raw.count > 0) rawNamed.add(`${file.family}/${file.name}`);
  if (extracted === null) return sameFiles(written, null);
  const asCp437 = sameFiles(written, extracted.cp437);
  return asCp437 === null ? null : sameFiles(written, extracted.latin1) === null ? null : asCp437;
}

let corpus: CorpusFile[] = [];
let ferry: Ferry;
let scratch: string;
const table = new Map<string, Record<'upload' | 'library', Record<Verdict, number>>>();
const problems: string[] = [];
/** accepted archives whose names unzip wrote as raw bytes (compared as CP437) */
const rawNamed = new Set<string>();

function count(family: string, route: 'upload' | 'library', verdict: Verdict, file: string, why?: string): void {
  let row = table.get(family);
  if (!row) {
    const zero = () => ({ refused: 0, 'accepted-exactly': 0, 'anything else': 0 });
    row = { upload: zero(), library: zero() };
    table.set(family, row);
  }
  row[route][verdict]++;
  if (verdict === 'anything else') problems.push(`${route} ${family}/${file}: ${why}`);
}

beforeAll(async () => {
  if (!present) return;
  corpus = await loadCorpus();
  scratch = await mkdtemp(path.join(os.tmpdir(), 'ferry-corpus-'));
  ferry = await startFerry({ targets: (config) => [new LocalTarget({ root: config.workspace }), createOfflineTarget(config)] });
  await writeFile(path.join(ferry.workspace, 'keep.txt'), 'outside every container\n');
}, 60_000);

afterAll(async () => {
  if (!present) return;
  await ferry.close();
  await rm(scratch, { recursive: true, force: true });
  const lines = ['| family | files | upload: refused | upload: accepted exactly | upload: anything else | library: refused | library: accepted exactly | library: anything else |', '|---|---|---|---|---|---|---|---|'];
  for (const [family, row] of [...table].sort()) {
    const files = row.upload.refused + row.upload['accepted-exactly'] + row.upload['anything else'];
    lines.push(`| ${family} | ${files} | ${row.upload.refused} | ${row.upload['accepted-exactly']} | ${row.upload['anything else']} | ${row.library.refused} | ${row.library['accepted-exactly']} | ${row.library['anything else']} |`);
  }
  if (rawNamed.size > 0) lines.push(`names unzip writes as bytes that are not UTF-8 (compared as CP437 or, MS-DOS-made, as ISO-8859-1): ${[...rawNamed].join(', ')}`);
  console.log(`zip corpus (${corpus.length} files):\n${lines.join('\n')}${problems.length > 0 ? `\n${problems.join('\n')}` : ''}`);
  if (process.env.FERRY_CORPUS_TABLE) await writeFile(process.env.FERRY_CORPUS_TABLE, `${lines.join('\n')}\n${problems.join('\n')}\n`);
});

/** Outside `container`, the workspace is as it was; returns what was written inside it. */
async function writtenIn(container: string, before: Record<string, string>, where: string): Promise<Record<string, string> | string> {
  const after = await snapshotTree(ferry.workspace);
  for (const [key, value] of Object.entries(before)) if (after[key] !== value) return `${where}: changed outside the container: ${key}`;
  const strays = Object.keys(after).filter((key) => !(key in before) && key !== container && !key.startsWith(`${container}/`));
  if (strays.length > 0) return `${where}: wrote outside the container: ${strays.slice(0, 3).join(', ')}`;
  return filesUnder(after, container);
}

async function errorOf(response: Response): Promise<string | null> {
  const text = await response.text();
  try {
    const body = JSON.parse(text) as { error?: unknown };
    return typeof body.error === 'string' ? body.error : null;
  } catch {
    return null;
  }
}

describe.skipIf(!present)('the public hostile ZIP corpus', () => {
  it('through the upload path: refused cleanly, or written exactly as unzip extracts it', async () => {
    for (const [i, file] of corpus.entries()) {
      const container = `up-${i}`;
      await mkdir(path.join(ferry.workspace, container));
      const before = await snapshotTree(ferry.workspace);
      const zipPath = path.join(scratch, `${i}.zip`);
      await writeFile(zipPath, file.bytes);
      const response = await ferry.fetch(`/api_v1/targets/local/resources/${encodeLocalId(container)}/`, {
        method: 'POST',
        headers: ferry.auth({ 'duplicate-file-action': 'ignore' }),
        body: uploadForm(file.bytes),
      });
      let outcome: 'refused' | 'succeeded';
      let sentence: string | null = null;
      if (response.status === 202) {
        const { ticket_number: ticket } = (await response.json()) as { ticket_number: string };
        const job: Job = await waitForJob(ferry, ticket, 120_000);
        outcome = job.status === 'succeeded' ? 'succeeded' : 'refused';
        sentence = job.error;
        if (job.status === 'cancelled') sentence = null;
      } else {
        outcome = 'refused';
        sentence = response.status >= 400 && response.status < 500 ? await errorOf(response) : null;
        if (sentence === null) count(file.family, 'upload', 'anything else', file.name, `answered ${response.status}`);
      }
      const written = await writtenIn(container, before, 'upload');
      if (typeof written === 'string') count(file.family, 'upload', 'anything else', file.name, written);
      else if (outcome === 'refused') {
        const wrong = sentenceProblem(sentence, [ferry.root]);
        if (wrong) count(file.family, 'upload', 'anything else', file.name, `refused, but its error ${wrong}`);
        else if (Object.keys(written).length > 0) count(file.family, 'upload', 'anything else', file.name, `refused (${sentence}) but left ${Object.keys(written).join(', ')}`);
        else count(file.family, 'upload', 'refused', file.name);
      } else {
        const differs = await comparedToReference(file, zipPath, written, rawNamed);
        count(file.family, 'upload', differs === null ? 'accepted-exactly' : 'anything else', file.name, differs ?? undefined);
      }
      await rm(path.join(ferry.workspace, container), { recursive: true, force: true });
    }
    expect(problems.filter((p) => p.startsWith('upload'))).toEqual([]);
  }, 600_000);

  it('through the offline library: listed damaged and never transferred, or transferred exactly as unzip extracts it', async () => {
    const library = path.join(ferry.dataDir, 'library');
    await mkdir(library, { recursive: true });
    const byTitle = new Map<string, CorpusFile>();
    for (const [i, file] of corpus.entries()) {
      const title = `${i}-${file.family}-${file.name.replace(/\.zip$/i, '')}`;
      byTitle.set(title, file);
      await writeFile(path.join(library, `${title}.zip`), file.bytes);
    }
    const listing = await ferry.fetch('/api_v1/targets/offline/resources/?container=None', { headers: ferry.auth() });
    expect(listing.status).toBe(200);
    const tops = (await listing.json()) as ResourceSummary[];
    expect(tops).toHaveLength(corpus.length);
    for (const node of tops) {
      const file = byTitle.get(node.title)!;
      const zipPath = path.join(library, `${node.title}.zip`);
      const detailResponse = await ferry.fetch(`/api_v1/targets/offline/resources/${node.id}.json/`, { headers: ferry.auth() });
      if (detailResponse.status !== 200) {
        count(file.family, 'library', 'anything else', file.name, `detail answered ${detailResponse.status}`);
        continue;
      }
      const detail = (await detailResponse.json()) as ResourceDetail;
      const download = await ferry.fetch(`/api_v1/targets/offline/resources/${node.id}.zip/`, { headers: ferry.auth() });
      await download.arrayBuffer().catch(() => undefined);
      if (download.status >= 500) {
        count(file.family, 'library', 'anything else', file.name, `.zip download answered ${download.status}`);
        continue;
      }
      const container = `lib-${node.title}`;
      await mkdir(path.join(ferry.workspace, container));
      const before = await snapshotTree(ferry.workspace);
      const response = await ferry.fetch(`/api_v1/targets/local/resources/${encodeLocalId(container)}/`, {
        method: 'POST',
        body: JSON.stringify({ source_target_name: 'offline', source_resource_id: node.id }),
        headers: ferry.auth({ 'duplicate-file-action': 'ignore', 'content-type': 'application/json' }),
      });
      let job: Job | null = null;
      let sentence: string | null;
      if (response.status === 202) {
        job = await waitForJob(ferry, ((await response.json()) as { ticket_number: string }).ticket_number, 120_000);
        sentence = job.error;
      } else sentence = response.status < 500 ? await errorOf(response) : null;
      const written = await writtenIn(container, before, 'library');
      if (typeof written === 'string') count(file.family, 'library', 'anything else', file.name, written);
      else if (detail.extra.state === 'damaged') {
        const wrong = sentenceProblem(detail.extra.error, [ferry.root]) ?? sentenceProblem(sentence, [ferry.root]);
        if (job?.status === 'succeeded') count(file.family, 'library', 'anything else', file.name, 'listed damaged, yet transferred');
        else if (wrong) count(file.family, 'library', 'anything else', file.name, `damaged, but ${wrong}`);
        else if (Object.keys(written).length > 0) count(file.family, 'library', 'anything else', file.name, 'refused but left files');
        else if (download.status < 400) count(file.family, 'library', 'anything else', file.name, `listed damaged, yet downloaded (${download.status})`);
        else count(file.family, 'library', 'refused', file.name);
      } else if (job?.status !== 'succeeded') {
        // listed "ok", but the transfer failed: a damaged entry found only when read
        const wrong = sentenceProblem(sentence, [ferry.root]);
        if (wrong) count(file.family, 'library', 'anything else', file.name, `listed ok, transfer failed: ${wrong}`);
        else if (Object.keys(written).length > 0) count(file.family, 'library', 'anything else', file.name, `listed ok, transfer failed (${sentence}) and left ${Object.keys(written).length} files`);
        else count(file.family, 'library', 'refused', file.name);
      } else {
        // the transfer writes the archive as one folder named like it
        const title = job.report?.resources_created[0] ?? node.title;
        const inside: Record<string, string> = {};
        for (const [relative, hash] of Object.entries(written)) if (relative.startsWith(`${title}/`)) inside[relative.slice(title.length + 1)] = hash;
        const differs = Object.keys(inside).length === Object.keys(written).length ? await comparedToReference(file, zipPath, inside, rawNamed) : `wrote outside '${title}'`;
        count(file.family, 'library', differs === null ? 'accepted-exactly' : 'anything else', file.name, differs ?? undefined);
      }
      await rm(path.join(ferry.workspace, container), { recursive: true, force: true });
    }
    expect(problems.filter((p) => p.startsWith('library'))).toEqual([]);
  }, 600_000);
});
