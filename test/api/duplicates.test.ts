// Duplicates (docs/api.md "Duplicate files") over real HTTP: `newer`, `rename`, the conflicts
// preview and per-file duplicate_choices, local → local and local → WebDAV on Apache mod_dav
// (skipped with the reason when Apache is not installed). The same core resolution serves both:
// neither target knows `newer` or `rename`.
import { execFileSync } from 'node:child_process';
import { mkdir, readdir, readFile, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Acknowledgement, ConflictsReport, Job } from '../../shared/api.js';
import { encodeLocalId, LocalTarget } from '../../electron/core/targets/local/index.js';
import { createWebdavTarget, webdavId } from '../../electron/core/targets/webdav/index.js';
import { apacheUnavailableReason, startApacheWebdav } from '../webdav/apache-webdav.js';
import type { RealWebdav } from '../webdav/process.js';
import { expectApiError, renamed, startFerry, uploadForm, waitForJob, writeTree, zipFolder, type Ferry } from './harness.js';

const STORED = new Date('2025-01-01T00:00:00Z');
const EARLIER = new Date('2020-01-01T00:00:00Z');
const LATER = new Date('2030-01-01T00:00:00Z');
const NEW = 'new content\n';
const OLD = 'old\n';

/** A destination the suite writes into: its folder Inbox on disk, how it names Inbox, its token. */
interface Destination {
  target: string;
  dir(): string;
  inboxId(): string;
  token(): string;
  /** who must own files put straight on disk (Apache's workers as root run as nobody) */
  owner?: string;
}

let apache: RealWebdav | null = null;
const apacheMissing = apacheUnavailableReason();
if (apacheMissing) console.warn(`[duplicates] WebDAV on Apache not run: ${apacheMissing}`);

let ferry: Ferry;
let otherRoot: string;
beforeAll(async () => {
  if (!apacheMissing) apache = await startApacheWebdav();
  ferry = await startFerry({
    targets: (config, secrets) => {
      otherRoot = path.join(path.dirname(config.workspace), 'other');
      return [new LocalTarget({ root: config.workspace }), renamed(new LocalTarget({ root: otherRoot }), 'other', 'Other folder'), createWebdavTarget(config, secrets, { retries: 1, timeoutMs: 10_000 })];
    },
  });
}, 60_000);
afterAll(async () => {
  await ferry?.close();
  await apache?.stop();
});

const local: Destination = {
  target: 'other',
  dir: () => path.join(otherRoot, 'Inbox'),
  inboxId: () => encodeLocalId('Inbox'),
  token: () => ferry.key,
};
const webdav: Destination = {
  target: 'webdav',
  dir: () => path.join(apache!.dataDir, 'Inbox'),
  inboxId: () => webdavId('/Inbox'),
  token: () => JSON.stringify({ url: apache!.url, username: apache!.username, password: apache!.password }),
  ...(process.getuid?.() === 0 ? { owner: 'nobody' } : {}),
};

for (const [name, destination, skip] of [
  ['local → local', local, null],
  ['local → WebDAV on Apache mod_dav', webdav, apacheMissing],
] as const) {
  describe.skipIf(skip !== null)(`duplicates, ${name}`, () => {
    /** The source folder `folder` in the workspace (path → [content, mtime]) and what Inbox/<folder> already holds, stored at STORED. */
    async function given(folder: string, source: Record<string, [string, Date]>, existing: Record<string, string>): Promise<void> {
      for (const [file, [content, mtime]] of Object.entries(source)) {
        await writeTree(ferry.workspace, { [`${folder}/${file}`]: content });
        await utimes(path.join(ferry.workspace, folder, file), mtime, mtime);
      }
      const there = path.join(destination.dir(), folder);
      await mkdir(there, { recursive: true });
      for (const [file, content] of Object.entries(existing)) {
        await writeFile(path.join(there, file), content);
        await utimes(path.join(there, file), STORED, STORED);
      }
      if (destination.owner) execFileSync('chown', ['-R', destination.owner, destination.dir()]);
    }

    const headers = (action: string) => ({
      'service-source-token': ferry.key,
      'service-destination-token': destination.token(),
      'duplicate-file-action': action,
      'content-type': 'application/json',
    });

    async function transfer(folder: string, action: string, choices?: Record<string, string>): Promise<Job> {
      const response = await ferry.fetch(`/api_v1/targets/${destination.target}/resources/${encodeURIComponent(destination.inboxId())}/`, {
        method: 'POST',
        body: JSON.stringify({ source_target_name: 'local', source_resource_id: encodeLocalId(folder), ...(choices ? { duplicate_choices: choices } : {}) }),
        headers: headers(action),
      });
      expect(response.status, await response.clone().text()).toBe(202);
      return waitForJob(ferry, ((await response.json()) as Acknowledgement).ticket_number, 60_000);
    }

    const read = (folder: string, file: string) => readFile(path.join(destination.dir(), folder, file), 'utf8');
    // the job's own provenance record aside (docs/provenance.md)
    const files = async (folder: string) => (await readdir(path.join(destination.dir(), folder))).filter((file) => file !== 'ferry-provenance.json').sort();

    it('newer: replaces only the files modified later than the stored ones', async () => {
      await given('Newer', { 'later.txt': [NEW, LATER], 'earlier.txt': [NEW, EARLIER], 'fresh.txt': [NEW, EARLIER] }, { 'later.txt': OLD, 'earlier.txt': OLD });
      const job = await transfer('Newer', 'newer');
      expect(job.status, job.error ?? '').toBe('succeeded');
      expect(await read('Newer', 'later.txt')).toBe(NEW);
      expect(await read('Newer', 'earlier.txt')).toBe(OLD);
      expect(await read('Newer', 'fresh.txt')).toBe(NEW);
      expect(job.report!.resources_updated).toEqual(['Newer/later.txt']);
      expect(job.report!.resources_created).toContain('Newer/fresh.txt');
      expect(job.report!.resources_ignored).toEqual(['Newer/earlier.txt']);
      // the provenance record names the file left there too, never read
      const record = JSON.parse(await read('Newer', 'ferry-provenance.json')) as { entries: { files: { path: string; outcome: string; size: number | null }[] }[] };
      const files = Object.fromEntries(record.entries.at(-1)!.files.map((file) => [file.path, file]));
      expect(files['Newer/earlier.txt']).toMatchObject({ outcome: 'ignored', size: null });
      expect(files['Newer/later.txt']).toMatchObject({ outcome: 'updated', size: NEW.length });
    });

    it('rename: keeps both, the new file under the first free name', async () => {
      await given('Rename', { 'a.txt': [NEW, EARLIER] }, { 'a.txt': OLD, 'a (2).txt': 'second\n' });
      const job = await transfer('Rename', 'rename');
      expect(job.status, job.error ?? '').toBe('succeeded');
      expect(await files('Rename')).toEqual(['a (2).txt', 'a (3).txt', 'a.txt']);
      expect(await read('Rename', 'a.txt')).toBe(OLD);
      expect(await read('Rename', 'a (2).txt')).toBe('second\n');
      expect(await read('Rename', 'a (3).txt')).toBe(NEW);
      expect(job.report!.resources_created).toContain('Rename/a (3).txt');
      expect(job.report!.resources_ignored).toEqual([]);
    });

    it('the conflicts preview lists both sides, and duplicate_choices decide per file', async () => {
      await given(
        'Pick',
        { 'keep.txt': [NEW, LATER], 'replace.txt': [NEW, EARLIER], 'both.txt': [NEW, EARLIER], 'new.txt': [NEW, EARLIER] },
        { 'keep.txt': OLD, 'replace.txt': OLD, 'both.txt': OLD },
      );
      const response = await ferry.fetch(`/api_v1/targets/${destination.target}/resources/${encodeURIComponent(destination.inboxId())}/conflicts/`, {
        method: 'POST',
        body: JSON.stringify({ source_target_name: 'local', source_resource_id: encodeLocalId('Pick') }),
        headers: headers('ignore'),
      });
      expect(response.status, await response.clone().text()).toBe(200);
      const preview = (await response.json()) as ConflictsReport;
      expect(preview.planned_files).toBe(4);
      expect(preview.conflicts.map((conflict) => conflict.path)).toEqual(['Pick/both.txt', 'Pick/keep.txt', 'Pick/replace.txt']);
      const keep = preview.conflicts.find((conflict) => conflict.path === 'Pick/keep.txt')!;
      expect(keep.source).toMatchObject({ size: NEW.length, date_modified: '2030-01-01T00:00:00.000000Z' });
      expect(keep.destination).toMatchObject({ size: OLD.length, date_modified: '2025-01-01T00:00:00.000000Z' });
      expect(keep.destination_path).toBe('Pick/keep.txt');

      const job = await transfer('Pick', 'ignore', { 'Pick/replace.txt': 'update', 'Pick/both.txt': 'rename' });
      expect(job.status, job.error ?? '').toBe('succeeded');
      expect(await files('Pick')).toEqual(['both (2).txt', 'both.txt', 'keep.txt', 'new.txt', 'replace.txt']);
      expect(await read('Pick', 'keep.txt')).toBe(OLD);
      expect(await read('Pick', 'replace.txt')).toBe(NEW);
      expect(await read('Pick', 'both.txt')).toBe(OLD);
      expect(await read('Pick', 'both (2).txt')).toBe(NEW);
      expect(job.report!.resources_ignored).toEqual(['Pick/keep.txt']);
      expect(job.report!.resources_updated).toEqual(['Pick/replace.txt']);
    });

    it('an upload: the preview of its described files, then each per-file choice in the form field does what it says', async () => {
      // what the ZIP holds (path → content, mtime) and what Inbox/Up already holds (stored at STORED)
      const zipped: Record<string, [string, Date]> = {
        'skip.txt': [NEW, LATER],
        'same.txt': [OLD, LATER],
        'different.txt': [NEW, EARLIER],
        'later.txt': [NEW, LATER],
        'earlier.txt': [NEW, EARLIER],
        'both.txt': [NEW, EARLIER],
        'header.txt': [NEW, LATER],
        'new.txt': [NEW, EARLIER],
      };
      await given('Up', {}, { 'skip.txt': OLD, 'same.txt': OLD, 'different.txt': OLD, 'later.txt': OLD, 'earlier.txt': OLD, 'both.txt': OLD, 'header.txt': OLD });
      const zipDir = path.join(ferry.root, `zip-${destination.target}`);
      for (const [file, [content, mtime]] of Object.entries(zipped)) {
        await writeTree(zipDir, { [`Up/${file}`]: content });
        await utimes(path.join(zipDir, 'Up', file), mtime, mtime);
      }
      const zip = await zipFolder(zipDir, path.join(ferry.root, `up-${destination.target}.zip`));
      const into = `/api_v1/targets/${destination.target}/resources/${encodeURIComponent(destination.inboxId())}/`;
      const auth = { 'service-destination-token': destination.token() };

      // the renderer describes the files it is about to zip; the preview names the clashes as the choices' keys
      const described = Object.entries(zipped).map(([file, [content, mtime]]) => ({ path: `Up/${file}`, size: content.length, date_modified: mtime.toISOString() }));
      const previewed = await ferry.fetch(`${into}conflicts/`, { method: 'POST', body: JSON.stringify({ files: described }), headers: { ...auth, 'content-type': 'application/json' } });
      expect(previewed.status, await previewed.clone().text()).toBe(200);
      const preview = (await previewed.json()) as ConflictsReport;
      expect(preview.planned_files).toBe(8);
      expect(preview.conflicts.map((conflict) => conflict.path).sort()).toEqual(
        ['both', 'different', 'earlier', 'header', 'later', 'same', 'skip'].map((name) => `Up/${name}.txt`),
      );

      const form = uploadForm(zip);
      const choices = { 'Up/skip.txt': 'ignore', 'Up/same.txt': 'update', 'Up/different.txt': 'update', 'Up/later.txt': 'newer', 'Up/earlier.txt': 'newer', 'Up/both.txt': 'rename' };
      form.append('duplicate_choices', JSON.stringify(choices));
      // header.txt has no choice of its own: the header's action (update) decides it
      const response = await ferry.fetch(into, { method: 'POST', body: form, headers: { ...auth, 'duplicate-file-action': 'update' } });
      expect(response.status, await response.clone().text()).toBe(202);
      const job = await waitForJob(ferry, ((await response.json()) as Acknowledgement).ticket_number, 60_000);
      expect(job.status, job.error ?? '').toBe('succeeded');
      expect(await files('Up')).toEqual(['both (2).txt', 'both.txt', 'different.txt', 'earlier.txt', 'header.txt', 'later.txt', 'new.txt', 'same.txt', 'skip.txt']);
      expect(await read('Up', 'skip.txt')).toBe(OLD);
      expect(await read('Up', 'same.txt')).toBe(OLD);
      expect(await read('Up', 'different.txt')).toBe(NEW);
      expect(await read('Up', 'later.txt')).toBe(NEW);
      expect(await read('Up', 'earlier.txt')).toBe(OLD);
      expect(await read('Up', 'both.txt')).toBe(OLD);
      expect(await read('Up', 'both (2).txt')).toBe(NEW);
      expect(await read('Up', 'header.txt')).toBe(NEW);
      expect(job.report!.resources_updated.sort()).toEqual(['Up/different.txt', 'Up/header.txt', 'Up/later.txt']);
      expect(job.report!.resources_ignored.sort()).toEqual(['Up/earlier.txt', 'Up/same.txt', 'Up/skip.txt']);
      expect(job.report!.resources_created).toEqual(expect.arrayContaining(['Up/both (2).txt', 'Up/new.txt']));
    });
  });
}

describe('duplicates in an upload', () => {
  it('rename: an uploaded file whose name is taken is kept beside the one there', async () => {
    const zipDir = path.join(ferry.root, 'zip-src');
    await writeTree(zipDir, { 'Uploaded/a.txt': NEW });
    await writeTree(local.dir(), { 'Uploaded/a.txt': OLD });
    const zip = await zipFolder(zipDir, path.join(ferry.root, 'upload.zip'));
    const response = await ferry.fetch(`/api_v1/targets/other/resources/${encodeURIComponent(encodeLocalId('Inbox'))}/`, {
      method: 'POST',
      body: uploadForm(zip),
      headers: ferry.auth({ 'duplicate-file-action': 'rename' }),
    });
    expect(response.status, await response.clone().text()).toBe(202);
    const job = await waitForJob(ferry, ((await response.json()) as Acknowledgement).ticket_number);
    expect(job.status, job.error ?? '').toBe('succeeded');
    expect(job.report!.resources_created).toContain('Uploaded/a (2).txt');
    expect(await readFile(path.join(local.dir(), 'Uploaded/a.txt'), 'utf8')).toBe(OLD);
    expect(await readFile(path.join(local.dir(), 'Uploaded/a (2).txt'), 'utf8')).toBe(NEW);
  });
});

describe('duplicates, what is refused', () => {
  it('an unknown action, in the header or a choice, is a 400 naming the four', async () => {
    await writeTree(ferry.workspace, { 'Refused/a.txt': NEW });
    const into = `/api_v1/targets/other/resources/${encodeURIComponent(encodeLocalId('Inbox'))}/`;
    await mkdir(local.dir(), { recursive: true });
    const body = (extra = {}) => JSON.stringify({ source_target_name: 'local', source_resource_id: encodeLocalId('Refused'), ...extra });
    const header = await expectApiError(
      await ferry.fetch(into, { method: 'POST', body: body(), headers: ferry.auth({ 'duplicate-file-action': 'overwrite', 'content-type': 'application/json' }) }),
      400,
      'invalid_duplicate_action',
    );
    expect(header.error).toMatch(/'ignore'.*'update'.*'newer'.*'rename'/);
    await expectApiError(
      await ferry.fetch(into, { method: 'POST', body: body({ duplicate_choices: { 'Refused/a.txt': 'overwrite' } }), headers: ferry.auth({ 'duplicate-file-action': 'ignore', 'content-type': 'application/json' }) }),
      400,
      'bad_request',
    );
  });

  it('an upload whose duplicate_choices field is not a JSON object of the four actions is a 400, and no spool file is left', async () => {
    await writeTree(path.join(ferry.root, 'zip-refused'), { 'a.txt': NEW });
    const zip = await zipFolder(path.join(ferry.root, 'zip-refused'), path.join(ferry.root, 'refused.zip'));
    const into = `/api_v1/targets/other/resources/${encodeURIComponent(encodeLocalId('Inbox'))}/`;
    await mkdir(local.dir(), { recursive: true });
    for (const field of ['{"a.txt": "overwrite"}', '["a.txt"]', 'not json']) {
      const form = uploadForm(zip);
      // after the file: the ZIP was spooled already, and is removed with the refusal
      form.append('duplicate_choices', field);
      const refused = await expectApiError(await ferry.fetch(into, { method: 'POST', body: form, headers: ferry.auth({ 'duplicate-file-action': 'ignore' }) }), 400, 'invalid_duplicate_action');
      expect(refused.error).toMatch(/duplicate_choices/);
      expect(await readdir(path.join(ferry.dataDir, 'spool'))).toEqual([]);
    }
  });

  it('a preview names a transfer source or an upload’s files, not both; a described hash is lowercase hex', async () => {
    const conflicts = `/api_v1/targets/other/resources/${encodeURIComponent(encodeLocalId('Inbox'))}/conflicts/`;
    const both = JSON.stringify({ source_target_name: 'local', source_resource_id: encodeLocalId('Refused'), files: [{ path: 'a.txt' }] });
    await expectApiError(await ferry.fetch(conflicts, { method: 'POST', body: both, headers: ferry.auth({ 'content-type': 'application/json' }) }), 400, 'bad_request');
    const badHash = JSON.stringify({ files: [{ path: 'a.txt', hashes: { sha256: 'not hex' } }] });
    await expectApiError(await ferry.fetch(conflicts, { method: 'POST', body: badHash, headers: ferry.auth({ 'content-type': 'application/json' }) }), 400, 'bad_request');
  });

  it('an upload’s files are previewed from their description alone', async () => {
    await writeTree(local.dir(), { 'Up/a.txt': OLD, 'Up/sub/c.txt': OLD });
    const response = await ferry.fetch(`/api_v1/targets/other/resources/${encodeURIComponent(encodeLocalId('Inbox'))}/conflicts/`, {
      method: 'POST',
      body: JSON.stringify({ files: [{ path: 'Up/a.txt', size: 12, date_modified: '2030-01-01T00:00:00Z', hashes: { sha256: 'ab'.repeat(32) } }, { path: 'Up/b.txt' }, { path: 'Up/sub' }] }),
      headers: ferry.auth({ 'content-type': 'application/json' }),
    });
    expect(response.status, await response.clone().text()).toBe(200);
    const preview = (await response.json()) as ConflictsReport;
    expect(preview).toMatchObject({
      planned_files: 3,
      conflicts: [
        { path: 'Up/a.txt', source: { size: 12, date_modified: '2030-01-01T00:00:00.000000Z', hashes: { sha256: 'ab'.repeat(32) } }, destination: { size: OLD.length } },
        // a folder has that name there
        { path: 'Up/sub', destination: null },
      ],
    });
  });
});
