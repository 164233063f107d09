import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rcloneUnavailableReason, writeRcloneConfig } from '../../../../test/rclone/servers.js';
import { collect, ctx, entriesFrom, withPlanOf, writeOptions } from '../../../../test/target-suite/test-entries.js';
import type { Entry, Target } from '../../target.js';
import { findRclone, rcloneId, startRcloneEngine, type RcloneEngine } from './index.js';
import { RcClient } from './rc-client.js';
import { RcloneTarget } from './rclone-target.js';

// What a write leaves behind when something goes wrong, against a real rclone rcd over a
// local folder. One fault is injected where no real server can be made to produce it on
// demand: a remote that stores other bytes than were sent (its stat answers another md5).

const skip = rcloneUnavailableReason();

function fileEntry(entryPath: string, chunks: (Buffer | Error)[]): Entry {
  const size = chunks.reduce((total, chunk) => total + (chunk instanceof Buffer ? chunk.length : 0), 0);
  return {
    path: entryPath,
    kind: 'file',
    size,
    mtime: null,
    hashes: {},
    open: async () =>
      Readable.from(
        (async function* () {
          for (const chunk of chunks) {
            if (chunk instanceof Error) throw chunk;
            yield chunk;
          }
        })(),
      ),
  };
}

async function* entriesOf(...entries: Entry[]): AsyncGenerator<Entry> {
  yield* entries;
}

if (skip) {
  describe('rclone writes', () => it.skip(`not run: ${skip}`, () => undefined));
} else {
  describe('rclone writes', () => {
    let dir: string;
    let folder: string;
    let engine: RcloneEngine;
    let target: Target;

    beforeAll(async () => {
      dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-rclone-write-'));
      folder = path.join(dir, 'files');
      await mkdir(path.join(folder, 'Inbox'), { recursive: true });
      const configPath = await writeRcloneConfig(dir, { scratch: { type: 'alias', remote: folder } });
      engine = await startRcloneEngine({ engine: 'local', binary: findRclone()!, configPath });
      target = (await engine.targets())[0]!;
    });

    afterAll(async () => {
      await engine?.stop();
      await rm(dir, { recursive: true, force: true });
    });

    it('a source that fails mid-file leaves neither the file nor a temporary behind', async () => {
      const entry = fileEntry('broken.bin', [Buffer.alloc(200_000, 1), new Error('the source disk went away')]);
      await expect(target.write(ctx('key'), rcloneId('Inbox'), entriesOf(entry), writeOptions())).rejects.toThrow();
      expect(await readdir(path.join(folder, 'Inbox'))).toEqual([]);
    });

    it('bytes the remote stored differently are not put in place, and the job hears which file and why', async () => {
      const client = new (class extends RcClient {
        override async call<T>(command: string, params: Record<string, unknown>, signal?: AbortSignal): Promise<T> {
          const answer = await super.call<T>(command, params, signal);
          if (command !== 'operations/stat') return answer;
          const item = (answer as { item: { Hashes?: Record<string, string> } | null }).item;
          if (item?.Hashes?.md5) item.Hashes.md5 = '0'.repeat(32);
          return answer;
        }
      })(engine.client.endpoint);
      const damaged = new RcloneTarget('rclone-damaged', client, { remote: 'scratch', type: 'alias', hashes: ['md5'], slowHash: true, root: folder, engine: 'this computer' });
      await writeFile(path.join(folder, 'Inbox', 'kept.txt'), 'the old bytes');
      const outcome = await damaged.write(ctx('key'), rcloneId('Inbox'), entriesOf(fileEntry('kept.txt', [Buffer.from('new bytes')])), writeOptions('update'));
      expect(outcome.created).toEqual([]);
      expect(outcome.updated).toEqual([]);
      expect(outcome.fileErrors).toEqual([{ path: 'kept.txt', error: expect.stringMatching(/^Not written: the remote's md5 0{32} differs from the [0-9a-f]{32} of the bytes sent\.$/) }]);
      // the existing file is untouched and no temporary is left
      expect(await readFile(path.join(folder, 'Inbox', 'kept.txt'), 'utf8')).toBe('the old bytes');
      expect(await readdir(path.join(folder, 'Inbox'))).toEqual(['kept.txt']);
    });

    it('update leaves an identical file alone even where the remote keeps no hash to compare', async () => {
      const noHashes = new RcloneTarget('rclone-plain', engine.client, { remote: 'scratch', type: 'alias', hashes: [], slowHash: true, root: folder, engine: 'this computer' });
      await writeFile(path.join(folder, 'Inbox', 'same.txt'), 'same bytes');
      const outcome = await noHashes.write(ctx('key'), rcloneId('Inbox'), entriesOf(fileEntry('same.txt', [Buffer.from('same bytes')])), writeOptions('update'));
      expect(outcome.ignored).toEqual(['same.txt']);
      expect(outcome.updated).toEqual([]);
      const changed = await noHashes.write(ctx('key'), rcloneId('Inbox'), entriesOf(fileEntry('same.txt', [Buffer.from('other bytes')])), writeOptions('update'));
      expect(changed.updated).toEqual(['same.txt']);
      expect(await readFile(path.join(folder, 'Inbox', 'same.txt'), 'utf8')).toBe('other bytes');
    });

    it('lists 100,000 entries in batches of at most 1,000, each entry once', async () => {
      const many = path.join(folder, 'Many');
      // 100 folders of 1,000 empty files, made by touch (far fewer syscalls than a writeFile each)
      await mkdir(many);
      await promisify(execFile)('sh', ['-c', 'for d in $(seq 0 99); do mkdir d$d && (cd d$d && seq -f "f%g.txt" 0 999 | xargs touch) || exit 1; done'], { cwd: many });
      try {
        expect(target.listBatches, 'the rclone target hands listings out in batches').toBeDefined();
        const seen = new Set<string>();
        let largest = 0;
        for await (const batch of target.listBatches!(ctx('key'))) {
          largest = Math.max(largest, batch.length);
          for (const node of batch) seen.add(node.id);
        }
        expect(largest).toBeLessThanOrEqual(1000);
        // the files, their 100 folders and Many; Inbox and what other tests left
        expect(seen.size).toBeGreaterThanOrEqual(100_101);
        expect(seen.has(rcloneId('Many/d99/f999.txt'))).toBe(true);
      } finally {
        await rm(many, { recursive: true, force: true });
      }
    }, 600_000);

    it('a new top-level upload that fails deletes the folder it made, with what went into it', async () => {
      const folderEntry: Entry = { path: 'Study', kind: 'folder', size: null, mtime: null, hashes: {}, open: () => Promise.reject(new Error('folder')) };
      async function* entries(): AsyncGenerator<Entry> {
        yield folderEntry;
        yield fileEntry('Study/a.txt', [Buffer.from('a')]);
        throw new Error('the source disk went away');
      }
      // planned first, as a job does, so the target streams the failing source
      const options = await withPlanOf(target, null, entriesFrom({ 'Study/': null, 'Study/a.txt': 'a' }));
      const error = (await target.write(ctx('key'), null, entries(), options).catch((e: unknown) => e)) as Error;
      expect(error.message).toMatch(/The new folder 'Study' on the rclone remote 'scratch' was removed again, so nothing is left behind\.$/);
      expect((await readdir(folder)).filter((name) => name.startsWith('Study'))).toEqual([]);
    });

    it('refuses ids that would climb out of the remote', async () => {
      for (const remotePath of ['..', 'Inbox/../..', '/etc/passwd', '']) {
        await expect(target.detail(ctx('key'), Buffer.from(remotePath).toString('base64url') || 'x.y')).rejects.toMatchObject({ status: 404 });
      }
      expect((await collect(target.list(ctx('key'), { container: null }))).map((node) => node.title)).toContain('Inbox');
    });
  });
}
