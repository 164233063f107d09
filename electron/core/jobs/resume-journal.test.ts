import { appendFile, mkdtemp, open, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Entry } from '../target.js';
import { JournaledEntries } from './journaled-entries.js';
import { identityOf, ResumeJournal } from './resume-journal.js';

const file = (entryPath: string, size: number, hashes: Record<string, string> = {}, mtime: Date | null = null): Entry => ({
  path: entryPath,
  kind: 'file',
  size,
  mtime,
  hashes,
  open: async () => Readable.from([Buffer.alloc(size)]),
});

async function* each(entries: Entry[]): AsyncGenerator<Entry> {
  yield* entries;
}

async function collect(entries: AsyncIterable<Entry>): Promise<string[]> {
  const paths: string[] = [];
  for await (const entry of entries) paths.push(entry.path);
  return paths;
}

describe('resume journal', () => {
  let dir: string;
  let journalFile: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-journal-'));
    journalFile = path.join(dir, 'job.journal');
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('gathers the lines after a batch for a while, and a flush writes them at once', async () => {
    const journal = await ResumeJournal.open(journalFile);
    const lines = async () => (await readFile(journalFile, 'utf8').catch(() => '')).split('\n').filter(Boolean).length;
    const turns = async (n: number) => {
      for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
    };
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      journal.recordFile('a', '1:mtime:1');
      // the first batch goes at once
      for (let i = 0; i < 1000 && (await lines()) < 1; i++) await turns(1);
      expect(await lines()).toBe(1);
      journal.recordFile('b', '1:mtime:2');
      journal.recordFile('c', '1:mtime:3');
      await turns(50);
      // the next one waits for its gathering time (a timer that, faked, never fires by itself)
      expect(await lines()).toBe(1);
      // a line a resumed run cannot do without ends the gathering
      journal.recordTop({ id: 'top-id', title: 'Top', from: 'Top' });
      for (let i = 0; i < 1000 && (await lines()) < 4; i++) await turns(1);
      expect(await lines()).toBe(4);
      journal.recordFile('d', '1:mtime:4');
      await journal.flush();
      expect(await lines()).toBe(5);
    } finally {
      vi.useRealTimers();
      await journal.close();
    }
    const reopened = await ResumeJournal.open(journalFile);
    expect(['a', 'b', 'c', 'd'].map((p, i) => reopened.has(p, `1:mtime:${i + 1}`))).toEqual([true, true, true, true]);
    await reopened.close();
  });

  it("writes a line a resumed run cannot do without while the last batch's sync still hangs (a kill keeps it); a flush waits for every sync", async () => {
    const probe = await open(path.join(dir, 'probe'), 'w');
    const fileHandle = Object.getPrototypeOf(probe) as { datasync(): Promise<void> };
    await probe.close();
    const held: (() => void)[] = [];
    // a busy disk: each fdatasync takes until the test lets it go
    const sync = vi.spyOn(fileHandle, 'datasync').mockImplementation(() => new Promise<void>((resolve) => held.push(resolve)));
    const journal = await ResumeJournal.open(journalFile);
    const lines = async () => (await readFile(journalFile, 'utf8').catch(() => '')).split('\n').filter(Boolean).length;
    const soon = async (condition: () => Promise<boolean>) => {
      for (let i = 0; i < 1000 && !(await condition()); i++) await new Promise((resolve) => setImmediate(resolve));
    };
    try {
      journal.recordFile('a', '1:mtime:1');
      await soon(async () => held.length === 1);
      expect(await lines()).toBe(1);
      journal.recordEngineJob({ engine: 'http://127.0.0.1:5572/', jobid: 7, group: 'ferry-1' });
      await soon(async () => (await lines()) === 2);
      expect(await lines()).toBe(2);
      let flushed = false;
      const flushing = journal.flush().then(() => (flushed = true));
      await soon(async () => held.length === 2);
      expect(flushed).toBe(false);
      held[0]!();
      await new Promise((resolve) => setImmediate(resolve));
      expect(flushed).toBe(false);
      held[1]!();
      await flushing;
      expect(flushed).toBe(true);
    } finally {
      sync.mockRestore();
      for (const release of held) release();
      await journal.close();
    }
    const reopened = await ResumeJournal.open(journalFile);
    expect(reopened.engineJob).toEqual({ engine: 'http://127.0.0.1:5572/', jobid: 7, group: 'ferry-1' });
    await reopened.close();
  });

  it('names a file by size and its strongest hash, else its mtime, else not at all', () => {
    expect(identityOf(file('a', 3, { md5: 'AB', sha256: 'cd' }))).toBe('3:sha256:cd');
    expect(identityOf(file('a', 3, {}, new Date(5000)))).toBe('3:mtime:5000');
    expect(identityOf(file('a', 3))).toBeNull();
    expect(identityOf({ ...file('a', 3, { md5: 'ab' }), size: null })).toBeNull();
  });

  it('keeps what was recorded across a reopen and ignores a line torn by a crash', async () => {
    const journal = await ResumeJournal.open(journalFile);
    journal.recordFile('Top/a.txt', '3:md5:aa');
    journal.recordTop({ id: 'id-1', title: 'Top (2)', from: 'Top' });
    await journal.close();
    await appendFile(journalFile, '{"f":"Top/b.txt","i":"4:md');
    const again = await ResumeJournal.open(journalFile);
    expect(again.filesDone).toBe(1);
    expect(again.has('Top/a.txt', '3:md5:aa')).toBe(true);
    expect(again.has('Top/a.txt', '3:md5:bb')).toBe(false);
    expect(again.has('Top/b.txt', '4:md5:bb')).toBe(false);
    expect(again.has('Top/a.txt', null)).toBe(false);
    expect(again.newResource).toEqual({ id: 'id-1', title: 'Top (2)', from: 'Top' });
    await again.forget();
    expect((await ResumeJournal.open(journalFile)).filesDone).toBe(0);
  });

  it('leaves out files done with the same source bytes, sends changed and new ones, records only confirmed files', async () => {
    const first = await ResumeJournal.open(journalFile);
    const run1 = new JournaledEntries(first);
    const entries = [file('d/a', 1, { md5: 'a1' }), file('d/b', 2, { md5: 'b1' }), file('d/c', 3, { md5: 'c1' })];
    expect(await collect(run1.filter(each(entries)))).toEqual(['d/a', 'd/b', 'd/c']);
    run1.onFileWritten('d/a');
    run1.onFileWritten('d/b'); // d/c: handed over, never confirmed (the crash)
    await first.close();
    expect((await readFile(journalFile, 'utf8')).trim().split('\n')).toHaveLength(2);

    const second = await ResumeJournal.open(journalFile);
    const run2 = new JournaledEntries(second);
    // d/b changed at the source since: sent again
    const changed = [file('d/a', 1, { md5: 'a1' }), file('d/b', 2, { md5: 'b2' }), file('d/c', 3, { md5: 'c1' })];
    expect(await collect(run2.filter(each(changed)))).toEqual(['d/b', 'd/c']);
    expect(run2.alreadyDone).toEqual(['d/a']);
    await second.close();
  });

  it('keys files by the source path when the writer is handed them below the top folder', async () => {
    const journal = await ResumeJournal.open(journalFile);
    const run = new JournaledEntries(journal, (written) => `Top/${written}`);
    await collect(run.filter(each([file('a', 1, { md5: 'a1' })])));
    run.onFileWritten('a');
    await journal.flush();
    expect(journal.has('Top/a', '1:md5:a1')).toBe(true);
    await journal.close();
  });

  it('keeps a file written part-way for the same source bytes only, until the file is done', async () => {
    const journal = await ResumeJournal.open(journalFile);
    const journaled = new JournaledEntries(journal);
    await collect(journaled.filter(each([file('Top/big.bin', 100, { md5: 'aa' }), file('Top/other.bin', 100)])));
    journaled.partials.keep('Top/big.bin', { bytes: 40, crc32: 0xdeadbeef });
    journaled.partials.keep('Top/other.bin', { bytes: 40, crc32: 1 }); // no identity: never kept
    await journal.close();
    // a line of a kind an older reader does not know, and a malformed partial, are ignored
    await appendFile(journalFile, '{"x":1}\n{"p":"Top/big.bin","i":"100:md5:aa","n":-1,"c":0}\n');

    const again = await ResumeJournal.open(journalFile);
    expect(again.hasEarlierRun).toBe(true);
    expect(again.partial('Top/big.bin', '100:md5:aa')).toEqual({ bytes: 40, crc32: 0xdeadbeef });
    expect(again.partial('Top/big.bin', '100:md5:bb')).toBeNull();
    expect(again.partial('Top/other.bin', null)).toBeNull();
    const resumed = new JournaledEntries(again);
    await collect(resumed.filter(each([file('Top/big.bin', 100, { md5: 'aa' })])));
    expect(resumed.partials.kept('Top/big.bin')).toEqual({ bytes: 40, crc32: 0xdeadbeef });
    resumed.onFileWritten('Top/big.bin');
    await again.close();
    const done = await ResumeJournal.open(journalFile);
    expect(done.partial('Top/big.bin', '100:md5:aa')).toBeNull();
    expect(done.has('Top/big.bin', '100:md5:aa')).toBe(true);
  });

  it('carries a journal over to a new job', async () => {
    const journal = await ResumeJournal.open(journalFile);
    journal.recordFile('x', '1:md5:aa');
    await journal.close();
    const copy = path.join(dir, 'next.journal');
    await ResumeJournal.copy(journalFile, copy);
    expect((await ResumeJournal.open(copy)).has('x', '1:md5:aa')).toBe(true);
    await ResumeJournal.copy(path.join(dir, 'none.journal'), path.join(dir, 'other.journal'));
    expect((await ResumeJournal.open(path.join(dir, 'other.journal'))).filesDone).toBe(0);
  });
});
