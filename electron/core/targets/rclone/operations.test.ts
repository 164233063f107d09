// Delete, rename/move and new folder on rclone remotes through a real rclone rcd: the local
// backend (through an alias, checked on disk) and s3rver's S3 (a bucket store, where empty
// folders cannot exist, so "new folder" is not offered).
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { rcloneUnavailableReason, startS3Server, writeRcloneConfig, type S3Server } from '../../../../test/rclone/servers.js';
import { collect, ctx } from '../../../../test/target-suite/test-entries.js';
import type { FerryError } from '../../errors.js';
import { FileOperations } from '../../operations/service.js';
import { TargetRegistry } from '../../registry.js';
import type { Target, Trash } from '../../target.js';
import { findRclone, rcloneId, startRcloneEngine, type RcloneEngine } from './index.js';

const skip = rcloneUnavailableReason();
const noTrash: Trash = { put: () => Promise.reject(new Error('an rclone delete used the local trash')) };
const token = 'access-key-checked-by-the-caller';
const fail = (promise: Promise<unknown>) => promise.then(() => null, (e: unknown) => e as FerryError);

function operationsFor(target: Target): FileOperations {
  const registry = new TargetRegistry();
  registry.register(target);
  return new FileOperations(registry, noTrash);
}

if (skip) {
  describe('rclone file operations', () => it.skip(`not run: ${skip}`, () => undefined));
} else {
  describe('rclone file operations on the local backend', () => {
    let dir: string;
    let folder: string;
    let engine: RcloneEngine;
    let target: Target;
    let operations: FileOperations;
    const disk = (p = '') => path.join(folder, p);

    beforeAll(async () => {
      dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-rclone-ops-'));
      folder = path.join(dir, 'files');
      await mkdir(folder, { recursive: true });
      engine = await startRcloneEngine({ engine: 'local', binary: findRclone()!, configPath: await writeRcloneConfig(dir, { scratch: { type: 'alias', remote: folder } }) });
      target = (await engine.targets())[0]!;
      operations = operationsFor(target);
    });
    afterAll(async () => {
      await engine?.stop();
      await rm(dir, { recursive: true, force: true });
    });
    beforeEach(async () => {
      await rm(folder, { recursive: true, force: true });
      await mkdir(disk('Data/raw'), { recursive: true });
      await mkdir(disk('Other'), { recursive: true });
      await writeFile(disk('Data/a.txt'), 'alpha');
      await writeFile(disk('Data/b.txt'), 'beta');
      await writeFile(disk('Data/raw/c.bin'), 'sea');
      await writeFile(disk('Other/keep.txt'), 'keep');
    });

    it('offers every operation on a backend with real folders', () => {
      expect(target.info.supported_operations).toEqual({ delete: true, rename: true, move: true, create_folder: true });
    });

    it('renames a file (operations/movefile) and never replaces a taken name unless asked', async () => {
      const { outcome, undo } = await operations.move(target, ctx(token), rcloneId('Data/a.txt'), { title: 'renamed.txt' });
      expect(outcome.after).toMatchObject({ id: rcloneId('Data/renamed.txt'), title: 'renamed.txt', container: rcloneId('Data') });
      expect(undo).toEqual({ kind: 'move', id: rcloneId('Data/renamed.txt'), title: 'a.txt', container: rcloneId('Data') });
      const refused = await fail(operations.move(target, ctx(token), rcloneId('Data/renamed.txt'), { title: 'b.txt' }));
      expect(refused?.status).toBe(409);
      expect(refused?.message).toMatch(/'Data\/b\.txt' already exists/);
      expect(await readFile(disk('Data/b.txt'), 'utf8')).toBe('beta');
      const replaced = await operations.move(target, ctx(token), rcloneId('Data/renamed.txt'), { title: 'b.txt', overwrite: true });
      expect(replaced.outcome.replaced).toEqual({ title: 'b.txt', into: { kind: 'deleted' } });
      expect(replaced.undo).toBeNull();
      expect((await readdir(disk('Data'))).sort()).toEqual(['b.txt', 'raw']);
      expect(await readFile(disk('Data/b.txt'), 'utf8')).toBe('alpha');
    });

    it('moves a folder with its contents (sync/move), never into a folder of the same name, even with overwrite', async () => {
      await mkdir(disk('Other/raw'));
      const merged = await fail(operations.move(target, ctx(token), rcloneId('Data/raw'), { container: rcloneId('Other'), overwrite: true }));
      expect(merged?.status).toBe(409);
      expect(merged?.message).toMatch(/would merge folders/);
      expect(await readdir(disk('Other/raw'))).toEqual([]);
      const { outcome } = await operations.move(target, ctx(token), rcloneId('Data/raw'), { container: rcloneId('Other'), title: 'raw2' });
      expect(outcome.after).toMatchObject({ id: rcloneId('Other/raw2'), kind_name: 'folder', container: rcloneId('Other') });
      expect(await readFile(disk('Other/raw2/c.bin'), 'utf8')).toBe('sea');
      expect((await readdir(disk('Data'))).sort()).toEqual(['a.txt', 'b.txt']);
    });

    it('deletes a folder (operations/purge) and a file (operations/deletefile), nothing else', async () => {
      const { outcome, undo } = await operations.delete(target, ctx(token), rcloneId('Data/raw'));
      expect(outcome).toEqual({ node: expect.objectContaining({ title: 'raw', kind_name: 'folder' }), into: { kind: 'deleted' } });
      expect(undo).toBeNull();
      await operations.delete(target, ctx(token), rcloneId('Data/a.txt'));
      expect(await readdir(disk('Data'))).toEqual(['b.txt']);
      expect(await readdir(disk('Other'))).toEqual(['keep.txt']);
      expect((await fail(operations.delete(target, ctx(token), rcloneId('Data/a.txt'))))?.status).toBe(404);
    });

    it('makes a folder (operations/mkdir); a taken name is a 409, not a silent success', async () => {
      const { node, undo } = await operations.createFolder(target, ctx(token), rcloneId('Data'), 'New');
      expect(node).toMatchObject({ id: rcloneId('Data/New'), kind_name: 'folder' });
      expect(undo).toEqual({ kind: 'delete', id: rcloneId('Data/New') });
      expect((await readdir(disk('Data'))).sort()).toEqual(['New', 'a.txt', 'b.txt', 'raw']);
      expect((await fail(operations.createFolder(target, ctx(token), rcloneId('Data'), 'raw')))?.status).toBe(409);
      expect((await fail(operations.createFolder(target, ctx(token), null, '.ferry-upload-x')))?.status).toBe(400);
    });
  });

  describe('rclone file operations on S3 (s3rver)', () => {
    let dir: string;
    let server: S3Server;
    let engine: RcloneEngine;
    let target: Target;
    let operations: FileOperations;
    const at = (p: string) => rcloneId(`${server.bucket}/${p}`);

    beforeAll(async () => {
      dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-rclone-s3-ops-'));
      server = await startS3Server();
      const configPath = await writeRcloneConfig(dir, {
        store: { type: 's3', provider: 'Other', endpoint: server.endpoint, access_key_id: server.accessKeyId, secret_access_key: server.secretAccessKey, force_path_style: 'true' },
      });
      // rclone 1.60's S3 client fails on AWS_CA_BUNDLE; these servers are plain HTTP (as in contract.test.ts)
      const { AWS_CA_BUNDLE: _unused, ...env } = process.env;
      engine = await startRcloneEngine({ engine: 'local', binary: findRclone()!, configPath, env });
      target = (await engine.targets())[0]!;
      operations = operationsFor(target);
      const seed = path.join(dir, 'seed');
      await mkdir(path.join(seed, 'Data', 'raw'), { recursive: true });
      await writeFile(path.join(seed, 'Data', 'a.txt'), 'alpha');
      await writeFile(path.join(seed, 'Data', 'raw', 'c.bin'), 'sea');
      await engine.client.call('sync/copy', { srcFs: seed, dstFs: `store:${server.bucket}` });
    });
    afterAll(async () => {
      await engine?.stop();
      await server?.stop();
      await rm(dir, { recursive: true, force: true });
    });

    it('says it cannot make empty folders, and offers the rest', async () => {
      expect(target.info.supported_operations).toEqual({ delete: true, rename: true, move: true, create_folder: false });
      expect((await fail(operations.createFolder(target, ctx(token), at('Data'), 'New')))?.status).toBe(405);
    });

    it('renames a file, moves a folder, and deletes a folder with its objects', async () => {
      await operations.move(target, ctx(token), at('Data/a.txt'), { title: 'b.txt' });
      await operations.move(target, ctx(token), at('Data/raw'), { title: 'raw2' });
      const titles = async () => (await collect(target.list(ctx(token), { container: at('Data') }))).map((n) => n.title).sort();
      expect(await titles()).toEqual(['b.txt', 'raw2']);
      await operations.delete(target, ctx(token), at('Data/raw2'));
      expect(await titles()).toEqual(['b.txt']);
    });
  });
}
