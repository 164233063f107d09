// Delete (DELETE), rename/move (MOVE, Overwrite: F) and new folder (MKCOL) against every
// real WebDAV server the tests can start, checked on the server's own disk.
import { execFileSync } from 'node:child_process';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeConfig } from '../../config.js';
import type { FerryError } from '../../errors.js';
import { MemorySecretStore } from '../../keychain/memory.js';
import { FileOperations } from '../../operations/service.js';
import { TargetRegistry } from '../../registry.js';
import type { Target, Trash } from '../../target.js';
import type { RealWebdav } from '../../../../test/webdav/process.js';
import { REAL_WEBDAV_SERVERS } from '../../../../test/webdav/servers.js';
import { ctx } from '../../../../test/target-suite/test-entries.js';
import { createWebdavTarget, webdavId } from './index.js';
import { tempNameFor } from './temp-names.js';

/** A remote delete must never reach a trash on this machine. */
const noTrash: Trash = { put: () => Promise.reject(new Error('a WebDAV delete used the local trash')) };

for (const kind of REAL_WEBDAV_SERVERS) {
  describe.skipIf(kind.unavailable !== null)(`webdav file operations against ${kind.name}`, () => {
    let server: RealWebdav;
    let target: Target;
    let operations: FileOperations;
    let token: string;
    const disk = (p = '') => path.join(server.dataDir, 'Ops', p);
    const fail = (promise: Promise<unknown>) => promise.then(() => null, (e: unknown) => e as FerryError);

    beforeAll(async () => {
      server = await kind.start();
      token = JSON.stringify({ url: server.url, username: server.username, password: server.password });
      target = createWebdavTarget(makeConfig({ dataDir: '/nonexistent' }), new MemorySecretStore(), { retries: 1, timeoutMs: 10_000 });
      const registry = new TargetRegistry();
      registry.register(target);
      operations = new FileOperations(registry, noTrash);
    });
    afterAll(async () => {
      await server?.stop();
    });
    beforeEach(async () => {
      // as another client would have left it, on the server's disk
      await rm(disk(), { recursive: true, force: true });
      await mkdir(disk('Data/raw'), { recursive: true });
      await mkdir(disk('Other'), { recursive: true });
      await writeFile(disk('Data/a.txt'), 'alpha');
      await writeFile(disk('Data/b.txt'), 'beta');
      await writeFile(disk('Data/raw/c.bin'), 'sea');
      await writeFile(disk('Other/keep.txt'), 'keep');
      if (kind.ownerOfFiles) execFileSync('chown', ['-R', kind.ownerOfFiles, disk()]);
    });

    it('offers every operation', () => {
      expect(target.info.supported_operations).toEqual({ delete: true, rename: true, move: true, create_folder: true });
    });

    it('renames with MOVE, and refuses a taken name (Overwrite: F) leaving both files as they were', async () => {
      const { outcome, undo } = await operations.move(target, ctx(token), webdavId('/Ops/Data/a.txt'), { title: 'renamed.txt' });
      expect(outcome.after).toMatchObject({ id: webdavId('/Ops/Data/renamed.txt'), title: 'renamed.txt', container: webdavId('/Ops/Data') });
      expect(undo).toEqual({ kind: 'move', id: webdavId('/Ops/Data/renamed.txt'), title: 'a.txt', container: webdavId('/Ops/Data') });
      expect(await readFile(disk('Data/renamed.txt'), 'utf8')).toBe('alpha');

      const refused = await fail(operations.move(target, ctx(token), webdavId('/Ops/Data/renamed.txt'), { title: 'b.txt' }));
      expect(refused?.status).toBe(409);
      expect(refused?.message).toMatch(/'\/Ops\/Data\/b\.txt' already exists/);
      expect(await readFile(disk('Data/b.txt'), 'utf8')).toBe('beta');
      expect(await readFile(disk('Data/renamed.txt'), 'utf8')).toBe('alpha');
    });

    it('replaces only when asked, and then says the old one was deleted (no undo)', async () => {
      const { outcome, undo } = await operations.move(target, ctx(token), webdavId('/Ops/Data/a.txt'), { title: 'b.txt', overwrite: true });
      expect(outcome.replaced).toEqual({ title: 'b.txt', into: { kind: 'deleted' } });
      expect(undo).toBeNull();
      expect(await readFile(disk('Data/b.txt'), 'utf8')).toBe('alpha');
      expect((await readdir(disk('Data'))).sort()).toEqual(['b.txt', 'raw']);
    });

    it('never replaces a folder with something inside it, even when asked', async () => {
      const refused = await fail(operations.move(target, ctx(token), webdavId('/Ops/Data/raw'), { container: webdavId('/Ops'), title: 'Data', overwrite: true }));
      expect(refused?.status).toBe(409);
      expect(await readFile(disk('Data/raw/c.bin'), 'utf8')).toBe('sea');
    });

    it('moves a folder with its contents into another folder and back to the top level', async () => {
      const { outcome } = await operations.move(target, ctx(token), webdavId('/Ops/Data/raw'), { container: webdavId('/Ops/Other') });
      expect(outcome.after).toMatchObject({ id: webdavId('/Ops/Other/raw'), kind_name: 'folder' });
      expect(await readFile(disk('Other/raw/c.bin'), 'utf8')).toBe('sea');
      const top = await operations.move(target, ctx(token), webdavId('/Ops/Other/raw'), { container: 'None', title: 'RawTop' });
      expect(top.outcome.after).toMatchObject({ id: webdavId('/RawTop'), container: null });
      expect(await readFile(path.join(server.dataDir, 'RawTop', 'c.bin'), 'utf8')).toBe('sea');
      await operations.delete(target, ctx(token), webdavId('/RawTop'));
    });

    it('makes a folder with MKCOL; a taken name is a 409; the undo is a delete', async () => {
      const { node, undo } = await operations.createFolder(target, ctx(token), webdavId('/Ops/Data'), 'New');
      expect(node).toMatchObject({ id: webdavId('/Ops/Data/New'), kind_name: 'folder', title: 'New' });
      expect(undo).toEqual({ kind: 'delete', id: webdavId('/Ops/Data/New') });
      expect((await readdir(disk('Data'))).sort()).toEqual(['New', 'a.txt', 'b.txt', 'raw']);
      const taken = await fail(operations.createFolder(target, ctx(token), webdavId('/Ops/Data'), 'raw'));
      expect(taken?.status).toBe(409);
      expect(taken?.message).toMatch(/already exists/);
    });

    it('deletes a folder and everything below it, and no sibling; a file alone', async () => {
      const { outcome, undo } = await operations.delete(target, ctx(token), webdavId('/Ops/Data/raw'));
      expect(outcome).toEqual({ node: expect.objectContaining({ title: 'raw', kind_name: 'folder' }), into: { kind: 'deleted' } });
      expect(undo).toBeNull();
      await operations.delete(target, ctx(token), webdavId('/Ops/Data/a.txt'));
      expect(await readdir(disk('Data'))).toEqual(['b.txt']);
      expect(await readdir(disk('Other'))).toEqual(['keep.txt']);
      const missing = await fail(operations.delete(target, ctx(token), webdavId('/Ops/Data/a.txt')));
      expect(missing?.status).toBe(404);
    });

    it("refuses names the rule or Ferry's temporary names forbid, before any request", async () => {
      for (const bad of ['a/b', '..', tempNameFor('a.txt')]) {
        const error = await fail(operations.move(target, ctx(token), webdavId('/Ops/Data/a.txt'), { title: bad }));
        expect(error?.status, bad).toBe(400);
      }
      expect((await readdir(disk('Data'))).sort()).toEqual(['a.txt', 'b.txt', 'raw']);
    });
  });
}
