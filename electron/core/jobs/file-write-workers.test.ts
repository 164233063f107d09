import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFile, lstat, mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { fastPathOn } from '../fast-paths.js';
import { fileWriteWorkers } from './file-write-workers.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-file-workers-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('file-writing worker threads', () => {
  it('writes a new file with its bytes and mtime and reports its stat', async () => {
    const file = path.join(dir, 'a.txt');
    const window = Buffer.from('xxhello worldyy');
    const mtime = new Date('2020-02-03T04:05:06.789Z');
    const stat = await fileWriteWorkers().writeNewFile(file, window.subarray(2, 13), mtime, false);
    expect(await readFile(file, 'utf8')).toBe('hello world');
    const onDisk = await lstat(file, { bigint: true });
    expect(onDisk.mtimeNs).toBe(BigInt(mtime.getTime()) * 1_000_000n);
    expect(stat).toEqual({ size: 11n, mtimeNs: onDisk.mtimeNs, ino: onDisk.ino, placeError: null });
    expect(Number(onDisk.mode) & 0o777).toBe(0o644 & ~process.umask());
    // the caller's buffer is not moved to the worker
    expect(window.toString()).toBe('xxhello worldyy');
  });

  it('moves a movable buffer to the worker (only its first bytes written) instead of copying it', async () => {
    const file = path.join(dir, 'moved.txt');
    // as the local target reads a small file: its own ArrayBuffer, a byte longer than the file
    const read = Buffer.allocUnsafeSlow(6);
    read.write('moved!');
    const bytes = read.subarray(0, 5);
    const stat = await fileWriteWorkers().writeNewFile(file, bytes, null, false, null, true);
    expect(await readFile(file, 'utf8')).toBe('moved');
    expect(stat.size).toBe(5n);
    // detached: the bytes went with the worker (a copy went, with the fast path off)
    expect(bytes.length).toBe(fastPathOn('moved-file-bytes') ? 0 : 5);
  });

  it('puts the written file in place in the same hop when asked, or says why not and leaves it written', async () => {
    const temporary = path.join(dir, '.tmp-1');
    const target = path.join(dir, 'placed.txt');
    const stat = await fileWriteWorkers().writeNewFile(temporary, Buffer.from('placed'), null, false, target);
    expect(stat.placeError).toBeNull();
    expect(await readFile(target, 'utf8')).toBe('placed');
    expect((await lstat(target, { bigint: true })).ino).toBe(stat.ino);
    expect(await readdir(dir)).toEqual(['placed.txt']);
    // a folder with something in it where the file should go: the rename fails, the temporary stays for the caller
    const folder = path.join(dir, 'folder');
    await mkdir(folder);
    await writeFile(path.join(folder, 'inside'), 'x');
    const blocked = await fileWriteWorkers().writeNewFile(path.join(dir, '.tmp-2'), Buffer.from('blocked'), null, false, folder);
    expect(blocked.placeError).toMatchObject({ code: expect.stringMatching(/^(EISDIR|ENOTEMPTY|EEXIST)$/), syscall: 'rename' });
    expect(await readFile(path.join(dir, '.tmp-2'), 'utf8')).toBe('blocked');
    expect(await readdir(folder)).toEqual(['inside']);
  });

  it('never replaces or follows what is already there, and says why as Node would', async () => {
    const existing = path.join(dir, 'taken.txt');
    await writeFile(existing, 'keep me');
    const link = path.join(dir, 'link');
    await symlink(existing, link);
    for (const target of [existing, link]) {
      const error = await fileWriteWorkers().writeNewFile(target, Buffer.from('new'), null, true).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'EEXIST', syscall: 'open' });
    }
    expect(await readFile(existing, 'utf8')).toBe('keep me');
  });

  it('leaves nothing behind when the folder is missing', async () => {
    const error = await fileWriteWorkers().writeNewFile(path.join(dir, 'missing', 'a.txt'), Buffer.from('x'), null, false).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'ENOENT' });
    expect(await readdir(dir)).toEqual([]);
  });

  it('writes many files asked for at once (batched), each with its own bytes', async () => {
    await mkdir(path.join(dir, 'many'));
    const names = Array.from({ length: 200 }, (_, i) => `f${i}.txt`);
    await Promise.all(names.map((name, i) => fileWriteWorkers().writeNewFile(path.join(dir, 'many', name), Buffer.from(`file ${i}`), null, i % 50 === 0)));
    expect((await readdir(path.join(dir, 'many'))).length).toBe(200);
    expect(await readFile(path.join(dir, 'many', 'f123.txt'), 'utf8')).toBe('file 123');
  });

  it('writes the files of several folders asked for at once, and a failed file leaves its folder to the next', async () => {
    // each folder's files go to one thread while any is under way (FolderLanes): the answers,
    // failures included, let the folder go, so nothing asked later waits for good
    const folders = ['a', 'b', 'c', 'd'];
    for (const folder of folders) await mkdir(path.join(dir, folder));
    const asked = folders.flatMap((folder) => Array.from({ length: 25 }, (_, i) => ({ file: path.join(dir, folder, `f${i}.txt`), text: `${folder} ${i}` })));
    await Promise.all(asked.map(({ file, text }) => fileWriteWorkers().writeNewFile(file, Buffer.from(text), null, false)));
    for (const { file, text } of asked) expect(await readFile(file, 'utf8')).toBe(text);
    await expect(fileWriteWorkers().writeNewFile(path.join(dir, 'a', 'f0.txt'), Buffer.from('again'), null, false)).rejects.toMatchObject({ code: 'EEXIST' });
    await fileWriteWorkers().writeNewFile(path.join(dir, 'a', 'after.txt'), Buffer.from('after'), null, false);
    expect(await readFile(path.join(dir, 'a', 'after.txt'), 'utf8')).toBe('after');
  });

  it('fsyncs files and folders, and reports a missing one', async () => {
    await writeFile(path.join(dir, 'b.txt'), 'b');
    await fileWriteWorkers().syncPaths([dir, path.join(dir, 'b.txt')]);
    await expect(fileWriteWorkers().syncPaths([path.join(dir, 'gone')])).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('renames pairs in one hop, each failing on its own as Node would', async () => {
    await writeFile(path.join(dir, 'a.part'), 'a');
    await writeFile(path.join(dir, 'b.part'), 'b');
    await mkdir(path.join(dir, 'folder', 'inside'), { recursive: true });
    const errors = await fileWriteWorkers().renameAll([
      [path.join(dir, 'a.part'), path.join(dir, 'a.txt')],
      [path.join(dir, 'b.part'), path.join(dir, 'folder')],
      [path.join(dir, 'gone.part'), path.join(dir, 'gone.txt')],
    ]);
    expect(errors[0]).toBeNull();
    expect(['EISDIR', 'ENOTEMPTY', 'EEXIST']).toContain(errors[1]?.code);
    expect(errors[2]).toMatchObject({ code: 'ENOENT', syscall: 'rename' });
    expect(await readFile(path.join(dir, 'a.txt'), 'utf8')).toBe('a');
    expect(await readFile(path.join(dir, 'b.part'), 'utf8')).toBe('b');
  });

  it('reads a whole file and hashes it there, into a buffer of its own', async () => {
    const file = path.join(dir, 'read.bin');
    const content = Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 7) % 251));
    await writeFile(file, content);
    const { bytes, hashes } = await fileWriteWorkers().readFile(file, content.length, ['md5', 'sha256']);
    expect(bytes.equals(content)).toBe(true);
    expect(hashes).toEqual({ md5: createHash('md5').update(content).digest('hex'), sha256: createHash('sha256').update(content).digest('hex') });
    // movable (WholeFile.movable): the bytes start an ArrayBuffer that is not Node's shared pool
    expect(bytes.byteOffset).toBe(0);
    expect(bytes.buffer.byteLength).toBeGreaterThanOrEqual(content.length);
    expect(bytes.buffer.byteLength).toBeLessThan(Buffer.poolSize * 64);
    // nothing asked, nothing hashed
    expect((await fileWriteWorkers().readFile(file, content.length, [])).hashes).toEqual({});
  });

  it('reads what is there now when the file grew or shrank since its size was taken; a missing or empty one as Node would', async () => {
    const file = path.join(dir, 'changed.txt');
    await writeFile(file, 'twelve bytes');
    await appendFile(file, ' and then some more');
    const grown = await fileWriteWorkers().readFile(file, 12, ['md5']);
    expect(grown.bytes.toString()).toBe('twelve bytes and then some more');
    expect(grown.hashes.md5).toBe(createHash('md5').update('twelve bytes and then some more').digest('hex'));
    const shrunk = await fileWriteWorkers().readFile(file, 4096, []);
    expect(shrunk.bytes.toString()).toBe('twelve bytes and then some more');
    expect((await fileWriteWorkers().readFile(path.join(dir, 'empty'), 0, []).catch((error: unknown) => error)) as NodeJS.ErrnoException).toMatchObject({ code: 'ENOENT' });
    await writeFile(path.join(dir, 'empty'), '');
    expect((await fileWriteWorkers().readFile(path.join(dir, 'empty'), 0, ['md5'])).hashes.md5).toBe('d41d8cd98f00b204e9800998ecf8427e');
  });

  it('never follows a link, and says why as Node would', async () => {
    await writeFile(path.join(dir, 'real.txt'), 'real');
    await symlink(path.join(dir, 'real.txt'), path.join(dir, 'link.txt'));
    await expect(fileWriteWorkers().readFile(path.join(dir, 'link.txt'), 4, ['md5'])).rejects.toMatchObject({ code: 'ELOOP', syscall: 'open', path: path.join(dir, 'link.txt') });
  });

  it('a read whose threads are lost is made on this thread instead; the next read starts new threads, until MAX_THREAD_SETS sets were lost', async () => {
    // threads of their own: the sets a process may start are counted
    vi.resetModules();
    const { fileWriteWorkers: freshPool, readOnWorkerOrHere } = await import('./file-write-workers.js');
    const { computeThreads, MAX_THREAD_SETS } = await import('../compute/compute-threads.js');
    const file = path.join(dir, 'lost.txt');
    await writeFile(file, 'bytes');
    const pool = freshPool();
    const read = () => readOnWorkerOrHere(async (workers) => (await workers.readFile(file, 5, [])).bytes.toString(), async () => 'read here');
    const onThreads = fastPathOn('worker-reads') ? 'bytes' : 'read here';
    // each thread is first given a message that throws there (a batch that is no array), so it
    // dies before it reaches the read posted after it: the read is in flight when the set is lost
    const loseTheThreads = async (set: number) => {
      const threads = computeThreads()!;
      for (const thread of threads.threads) thread.post({ kind: 'files', batch: null as unknown as [] });
      expect(await read(), `set ${set}`).toBe('read here');
      // with worker-reads off the read waited on no thread: the set is lost before the next starts
      await vi.waitFor(() => expect(threads.lost).not.toBeNull());
    };
    for (let set = 1; set <= MAX_THREAD_SETS; set++) {
      await pool.writeNewFile(path.join(dir, `started-${set}.txt`), Buffer.from('the threads start'), null, false);
      expect(await read()).toBe(onThreads);
      await loseTheThreads(set);
    }
    expect(pool.available).toBe(false);
    expect(await read()).toBe('read here');
    await expect(pool.writeNewFile(path.join(dir, 'after.txt'), Buffer.from('x'), null, false)).rejects.toBeInstanceOf(Error);
  });

  it('never keeps a process from exiting once its work is done, nor do the hash workers (a thread never asked anything included)', async () => {
    const file = path.join(dir, 'exit.txt');
    const script = `
      const { writeFileSync } = await import('node:fs');
      const { fileWriteWorkers } = await import(${JSON.stringify(new URL('./file-write-workers.ts', import.meta.url).href)});
      const { hashFile } = await import(${JSON.stringify(new URL('../hashing.ts', import.meta.url).href)});
      writeFileSync(${JSON.stringify(file)}, Buffer.alloc(1024 * 1024, 7));
      await fileWriteWorkers().readFile(${JSON.stringify(file)}, 1024 * 1024, ['md5']);
      await fileWriteWorkers().writeNewFile(${JSON.stringify(file)} + '.copy', Buffer.from('x'), null, false);
      await hashFile(${JSON.stringify(file)}, ['sha256']);
      console.log('done');`;
    const scriptFile = path.join(dir, 'uses-the-pools.mts');
    await writeFile(scriptFile, script);
    const run = spawnSync(process.execPath, ['--import', 'tsx', scriptFile], { encoding: 'utf8', timeout: 30_000, env: { ...process.env, FERRY_WRITE_WORKERS: '2', FERRY_HASH_WORKERS: '2' } });
    expect(run.stdout.trim(), run.stderr).toBe('done');
    expect(run.signal, 'still running after 30 s: a worker thread held it').toBeNull();
    expect(run.status).toBe(0);
  }, 40_000);
});
