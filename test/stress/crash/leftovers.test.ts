// What a SIGKILL leaves outside the workspace, and who removes it at the next start: the
// library's hidden `.partial` copies, the upload spool's `.part` and never-submitted ZIPs.
// (The crash test itself only asserts nothing is *visible*; these keep the disk from filling.)
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Library } from '../../../electron/core/targets/offline/library.js';
import { startFerry } from '../../../electron/host.js';
import { removeUnownedFiles } from '../../../electron/core/jobs/owned-files.js';
import { MemorySecretStore } from '../../../electron/core/keychain/memory.js';

/** The pid of a process that has exited (what a killed Ferry's pid is at the next start). */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  return Number(child.stdout.toString());
}

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-leftovers-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('library leftovers', () => {
  it('sweeps the hidden partial copies of a process that is gone, never a live one', async () => {
    const library = new Library([dir]);
    const dead = `.local_download_x.${deadPid()}.${Date.now()}.partial`;
    const live = `.local_download_y.${process.pid}.${Date.now()}.partial`;
    await writeFile(path.join(dir, dead), 'half an archive');
    await writeFile(path.join(dir, live), 'being written now');
    await writeFile(path.join(dir, '.notes.partial'), 'not ours: no pid');
    expect(await library.sweep()).toBe(1);
    expect((await readdir(dir)).sort()).toEqual([live, '.notes.partial'].sort());
  });

  it('two copies of the same download committed at once both survive', async () => {
    const library = new Library([dir]);
    const copies = await Promise.all([library.keep('local_download_x'), library.keep('local_download_x')]);
    copies[0].stream.end('first');
    copies[1].stream.end('second');
    const names = await Promise.all(copies.map((copy) => copy.commit()));
    expect(names.sort()).toEqual(['local_download_x (2).zip', 'local_download_x.zip']);
    expect((await readdir(dir)).sort()).toEqual(['local_download_x (2).zip', 'local_download_x.zip']);
  });
});

describe('spool leftovers', () => {
  it('keeps what a job owns (a resumed upload reads it), removes the rest', async () => {
    await writeFile(path.join(dir, 'owned.zip'), 'PK');
    await writeFile(path.join(dir, 'orphan.zip'), 'PK');
    await writeFile(path.join(dir, 'cut-off.part'), 'PK');
    expect(await removeUnownedFiles(dir, new Set([path.join(dir, 'owned.zip')]))).toBe(2);
    expect(await readdir(dir)).toEqual(['owned.zip']);
    expect(await removeUnownedFiles(path.join(dir, 'missing'), new Set())).toBe(0);
  });

  it('at start, removes spooled uploads no job owns (cut off mid-body, or never submitted)', async () => {
    const dataDir = path.join(dir, 'data');
    const spool = path.join(dataDir, 'spool');
    await mkdir(spool, { recursive: true });
    await writeFile(path.join(spool, '0c5e7a52-0000-4000-8000-000000000001.part'), 'half a body');
    await writeFile(path.join(spool, '0c5e7a52-0000-4000-8000-000000000002.zip'), 'PK\x03\x04 spooled, never submitted');
    await mkdir(path.join(dataDir, 'library'), { recursive: true });
    await writeFile(path.join(dataDir, 'library', `.local_download_x.${deadPid()}.1.partial`), 'half');
    const running = await startFerry({ dataDir, workspace: path.join(dir, 'workspace'), secrets: new MemorySecretStore() });
    try {
      expect(await readdir(spool)).toEqual([]);
      expect(await readdir(path.join(dataDir, 'library'))).toEqual([]);
    } finally {
      await running.close();
    }
  });
});
