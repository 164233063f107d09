import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job, ResourceSummary } from '../../shared/api.js';
import { makeConfig } from '../../electron/core/config.js';
import { createCore, type FerryCore } from '../../electron/core/ferry-core.js';
import { MemorySecretStore } from '../../electron/core/keychain/memory.js';
import { LocalTarget } from '../../electron/core/targets/local/index.js';
import { findRclone } from '../../electron/core/targets/rclone/index.js';
import { startServer } from '../../electron/server/server.js';
import type { RealWebdav } from '../webdav/process.js';
import { startRcloneWebdav } from '../webdav/rclone-webdav.js';
import { rcloneUnavailableReason } from '../rclone/servers.js';

// An rclone remote added in Ferry, with no rclone config file anywhere: a WebDAV server
// (rclone serve webdav, real, on loopback) with a user and password. The password goes to the
// keychain (a memory store here), to rclone only into the memory of an engine whose config is
// in memory (`--config ""`), and never into a file, a listing or a message; the remote is a
// target as soon as it is added, its bytes read back (a URL option's `//` survives), it comes
// back when Ferry starts again, and is gone when removed.

const skip = rcloneUnavailableReason();

interface Running {
  core: FerryCore;
  url: string;
  close(): Promise<void>;
}

if (skip) {
  console.warn(`[rclone remotes added in Ferry] not run: ${skip}`);
  describe('rclone remotes added in Ferry', () => it.skip(`not run: ${skip}`, () => undefined));
} else {
  let dir: string;
  let dav: RealWebdav;
  const secrets = new MemorySecretStore();
  let ferry: Running;

  const start = async (): Promise<Running> => {
    const workspace = path.join(dir, 'workspace');
    await mkdir(workspace, { recursive: true });
    // HOME and XDG_CONFIG_HOME point into the test's folder: rclone finds no config of the user's
    const env = { ...process.env, HOME: dir, XDG_CONFIG_HOME: path.join(dir, 'config') };
    const core = await createCore(makeConfig({ dataDir: path.join(dir, 'data'), workspace, rclone: { engine: 'local', binary: findRclone()!, env } }), {
      secrets,
      targets: (config) => [new LocalTarget({ root: config.workspace })],
    });
    const server = await startServer(core, { host: '127.0.0.1', port: 0, logger: false });
    return {
      core,
      url: server.url,
      async close() {
        await server.app.close();
        await core.close();
      },
    };
  };
  const call = (pathname: string, init: RequestInit = {}) =>
    fetch(new URL(pathname, ferry.url), {
      ...init,
      headers: { authorization: `Bearer ${ferry.core.accessKey}`, ...(init.body ? { 'content-type': 'application/json' } : {}), ...(init.headers as Record<string, string>) },
    });
  const put = (name: string, password: string) =>
    call(`/app/rclone-remotes/${name}`, { method: 'PUT', body: JSON.stringify({ type: 'webdav', options: { url: dav.url, vendor: 'other', user: dav.username, pass: password } }) });

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-rclone-remotes-'));
    dav = await startRcloneWebdav();
    ferry = await start();
  });

  afterAll(async () => {
    await ferry?.close();
    await dav?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  describe('rclone remotes added in Ferry', () => {
    it('a remote added with its password is a target at once; its password is nowhere but the keychain', async () => {
      const added = await put('lab-dav', dav.password);
      expect(added.status, await added.clone().text()).toBe(200);
      expect(await added.json()).toEqual({ name: 'lab-dav', type: 'webdav', target: 'rclone-lab-dav' });

      const targets = (await (await call('/api_v1/targets/')).json()) as { name: string; readable_name: string }[];
      expect(targets.find((target) => target.name === 'rclone-lab-dav')?.readable_name).toBe('lab-dav (rclone webdav)');

      // a file goes local → the new remote through a transfer job
      await mkdir(path.join(dir, 'workspace', 'Notes'), { recursive: true });
      await writeFile(path.join(dir, 'workspace', 'Notes', 'n.txt'), 'kept on WebDAV\n');
      const notes = ((await (await call('/api_v1/targets/local/resources/?container=None')).json()) as ResourceSummary[]).find((node) => node.title === 'Notes')!;
      const submitted = await call('/api_v1/targets/rclone-lab-dav/resources/', { method: 'POST', body: JSON.stringify({ source_target_name: 'local', source_resource_id: notes.id }), headers: { 'duplicate-file-action': 'update' } });
      expect(submitted.status, await submitted.clone().text()).toBe(202);
      const { ticket_number: ticket } = (await submitted.json()) as { ticket_number: string };
      let job: Job;
      do {
        await new Promise((resolve) => setTimeout(resolve, 50));
        job = (await (await call(`/api_v1/jobs/${ticket}/`)).json()) as Job;
      } while (job.status === 'queued' || job.status === 'running');
      expect(job.status, job.error ?? '').toBe('succeeded');
      expect(await readFile(path.join(dav.dataDir, 'Notes', 'n.txt'), 'utf8')).toBe('kept on WebDAV\n');

      // the listing has names and types only
      const listing = await (await call('/app/rclone-remotes')).text();
      expect(JSON.parse(listing)).toEqual({ available: true, remotes: [{ name: 'lab-dav', type: 'webdav', target: 'rclone-lab-dav' }] });
      expect(listing).not.toContain(dav.password);
      // no file of Ferry's or rclone's holds it (no config file was written either)
      for (const file of await readdir(dir, { recursive: true })) {
        const text = await readFile(path.join(dir, file)).then((bytes) => bytes.toString('latin1')).catch(() => '');
        expect(text.includes(dav.password), file).toBe(false);
      }
      expect(await readdir(path.join(dir, 'config', 'rclone')).catch(() => [])).toEqual([]);
      expect(await secrets.get('rclone-remote:lab-dav')).toContain(dav.password);
    });

    it('a remote that does not open with its settings is not added, and the message holds no secret', async () => {
      const wrong = `wrong-${dav.password}`;
      const answer = await call('/app/rclone-remotes/bad-dav', {
        method: 'PUT',
        body: JSON.stringify({ type: 'webdav', options: { url: 'http://127.0.0.1:1/', vendor: 'other', user: 'x', pass: wrong } }),
      });
      expect(answer.status).toBe(502);
      const text = await answer.text();
      expect(JSON.parse(text).error).toMatch(/^rclone could not open the webdav remote 'bad-dav' with these settings: /);
      expect(text).not.toContain(wrong);
      expect(text).not.toMatch(/pass=/);
      expect(((await (await call('/app/rclone-remotes')).json()) as { remotes: { name: string }[] }).remotes.map((remote) => remote.name)).toEqual(['lab-dav']);

      for (const [name, body, status] of [
        ['Bad Name', { type: 'webdav', options: {} }, 400],
        ['x', { type: 'no-such-backend', options: {} }, 400],
        ['x', { type: 'webdav', options: { not_an_option: '1' } }, 400],
      ] as const) {
        const refused = await call(`/app/rclone-remotes/${encodeURIComponent(name)}`, { method: 'PUT', body: JSON.stringify(body) });
        expect(refused.status, `${name}: ${await refused.clone().text()}`).toBe(status);
      }
    });

    it('option values with commas, colons and quotes reach rclone intact', async () => {
      for (const [index, hostile] of ['a,b', 'c:d', 'say "hi"', "it's", 'all ,:"\' mixed'].entries()) {
        const folder = path.join(dir, 'hostile', hostile);
        await mkdir(folder, { recursive: true });
        await writeFile(path.join(folder, `marker-${index}.txt`), 'here\n');
        const added = await call(`/app/rclone-remotes/odd-${index}`, { method: 'PUT', body: JSON.stringify({ type: 'alias', options: { remote: folder } }) });
        expect(added.status, `${hostile}: ${await added.clone().text()}`).toBe(200);
        const listed = (await (await call(`/api_v1/targets/rclone-odd-${index}/resources/?container=None`)).json()) as ResourceSummary[];
        expect(listed.map((node) => node.title), hostile).toEqual([`marker-${index}.txt`]);
        expect((await call(`/app/rclone-remotes/odd-${index}`, { method: 'DELETE' })).status).toBe(204);
      }
    });

    it('comes back when Ferry starts again, and is gone with its secrets when removed', async () => {
      await ferry.close();
      ferry = await start();
      expect(ferry.core.targets.find('rclone-lab-dav')).toBeDefined();
      const listed = await call('/api_v1/targets/rclone-lab-dav/resources/?container=None');
      const notes = ((await listed.json()) as ResourceSummary[]).find((node) => node.title === 'Notes')!;
      expect(notes).toBeDefined();
      // its bytes come back through rclone's object server, the connection string in the URL
      await mkdir(path.join(dir, 'workspace', 'Back'), { recursive: true });
      const back = ((await (await call('/api_v1/targets/local/resources/?container=None')).json()) as ResourceSummary[]).find((node) => node.title === 'Back')!;
      const submitted = await call(`/api_v1/targets/local/resources/${encodeURIComponent(back.id)}/`, { method: 'POST', body: JSON.stringify({ source_target_name: 'rclone-lab-dav', source_resource_id: notes.id }), headers: { 'duplicate-file-action': 'update' } });
      expect(submitted.status, await submitted.clone().text()).toBe(202);
      const { ticket_number: ticket } = (await submitted.json()) as { ticket_number: string };
      let job: Job;
      do {
        await new Promise((resolve) => setTimeout(resolve, 50));
        job = (await (await call(`/api_v1/jobs/${ticket}/`)).json()) as Job;
      } while (job.status === 'queued' || job.status === 'running');
      expect(job.status, job.error ?? '').toBe('succeeded');
      expect(await readFile(path.join(dir, 'workspace', 'Back', 'Notes', 'n.txt'), 'utf8')).toBe('kept on WebDAV\n');

      expect((await call('/app/rclone-remotes/lab-dav', { method: 'DELETE' })).status).toBe(204);
      expect((await call('/api_v1/targets/rclone-lab-dav/')).status).toBe(404);
      expect(await secrets.get('rclone-remote:lab-dav')).toBeNull();
      expect((await call('/app/rclone-remotes/lab-dav', { method: 'DELETE' })).status).toBe(404);
      expect((await call('/app/rclone-remotes', { headers: { authorization: 'Bearer nope' } })).status).toBe(401);
    });
  });
}
