// A large file written into the workspace by a job that keeps partials (resumable-write.ts):
// a pause keeps what is on disk and a later run reads only the rest from its source; a cancel
// keeps nothing; a partial changed between runs is never trusted.
import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { CancelledError } from '../../errors.js';
import { JobPaused } from '../../jobs/service.js';
import type { Entry, KeptPartial, PartialFiles, WriteOptions } from '../../target.js';
import { encodeLocalId } from './ids.js';
import { LocalTarget } from './local-target.js';
import { RESUMABLE_FILE_BYTES } from './resumable-write.js';
import { ctx, tempDirEach } from './test-helpers.js';
import { countedEntry } from '../../../../test/support/counted-entry.js';

const SIZE = RESUMABLE_FILE_BYTES + 5 * 1024 * 1024 + 17;
const work = tempDirEach('part-resume');
let bytes: Buffer;
let source: LocalTarget;
let destination: LocalTarget;
let into: string;

beforeEach(async () => {
  bytes ??= randomBytes(SIZE);
  await mkdir(path.join(work.dir, 'src', 'Big'), { recursive: true });
  await writeFile(path.join(work.dir, 'src', 'Big', 'big.bin'), bytes);
  into = path.join(work.dir, 'dst', 'Into');
  await mkdir(into, { recursive: true });
  source = new LocalTarget({ root: path.join(work.dir, 'src') });
  destination = new LocalTarget({ root: path.join(work.dir, 'dst') });
});

/** A job's partials, as its journal keeps them. */
function journal(): PartialFiles & { records: Map<string, KeptPartial> } {
  const records = new Map<string, KeptPartial>();
  return { records, kept: (file) => records.get(file) ?? null, keep: (file, kept) => void records.set(file, kept) };
}

/** One run: the source's entries, its bytes read counted, stopped with `stop` once `stopAfter` bytes were read. */
async function run(partials: PartialFiles, stop?: { after: number; reason: unknown }): Promise<{ read: number; outcome: Promise<unknown> }> {
  const controller = new AbortController();
  const counter = { read: 0 };
  const count = (bytes: number) => {
    counter.read += bytes;
    if (stop && counter.read >= stop.after && !controller.signal.aborted) controller.abort(stop.reason);
  };
  const read = await source.read(ctx(), encodeLocalId('Big'));
  async function* entries(): AsyncGenerator<Entry> {
    for await (const entry of read.entries) {
      if (entry.kind === 'folder') {
        yield entry;
        continue;
      }
      expect(entry.openFrom).toBeDefined();
      yield countedEntry(entry, count);
    }
  }
  const options: WriteOptions = { duplicateAction: 'ignore', signal: controller.signal, jobLabel: 'Ferry transfer 1234', partials };
  const outcome = destination.write(ctx(), encodeLocalId('Into'), entries(), options);
  await outcome.catch(() => undefined);
  return { read: counter.read, outcome };
}

const hidden = async () => (await readdir(path.join(into, 'Big'))).filter((name) => name.startsWith('.ferry-'));

describe('a large local file resumes from its last durable byte', () => {
  it('keeps the partial at a pause and reads only the rest from the source when resumed', async () => {
    const partials = journal();
    const first = await run(partials, { after: 20 * 1024 * 1024, reason: new JobPaused() });
    await expect(first.outcome).rejects.toBeInstanceOf(CancelledError);
    const kept = partials.records.get('Big/big.bin')!;
    // what was on disk when it stopped: some of what was read, never more
    expect(kept.bytes).toBeGreaterThan(0);
    expect(kept.bytes).toBeLessThanOrEqual(first.read);
    expect(first.read).toBeLessThan(SIZE);
    const [partial] = await hidden();
    expect(partial).toMatch(/^\.ferry-resume-[0-9a-f]{32}\.part$/);
    // the listing never shows it
    expect((await destination.detail(ctx(), encodeLocalId('Into/Big'))).title).toBe('Big');

    const second = await run(partials);
    await expect(second.outcome).resolves.toMatchObject({ created: ['Big/big.bin'] });
    expect(second.read).toBe(SIZE - kept.bytes);
    expect((await readFile(path.join(into, 'Big', 'big.bin'))).equals(bytes)).toBe(true);
    expect(await hidden()).toEqual([]);
  });

  it('writes the file again from byte 0 when the kept bytes were changed on disk since', async () => {
    const partials = journal();
    await run(partials, { after: 20 * 1024 * 1024, reason: new JobPaused() });
    const [partial] = await hidden();
    const handle = await open(path.join(into, 'Big', partial!), 'r+');
    await handle.write(Buffer.from([bytes[1000]! ^ 0xff]), 0, 1, 1000);
    await handle.close();

    const second = await run(partials);
    await expect(second.outcome).resolves.toMatchObject({ created: ['Big/big.bin'] });
    expect(second.read).toBe(SIZE);
    expect((await readFile(path.join(into, 'Big', 'big.bin'))).equals(bytes)).toBe(true);
    expect(await hidden()).toEqual([]);
  });

  it('does not trust a partial shorter than its record, and keeps nothing after a cancel', async () => {
    const partials = journal();
    await run(partials, { after: 20 * 1024 * 1024, reason: new JobPaused() });
    const [partial] = await hidden();
    const kept = partials.records.get('Big/big.bin')!;
    partials.records.set('Big/big.bin', { ...kept, bytes: kept.bytes + 4096 });
    expect((await readdir(path.join(into, 'Big'))).includes(partial!)).toBe(true);

    const cancelled = await run(partials, { after: 10 * 1024 * 1024, reason: new Error('cancelled by the user') });
    await expect(cancelled.outcome).rejects.toBeInstanceOf(CancelledError);
    expect(cancelled.read).toBeGreaterThanOrEqual(10 * 1024 * 1024); // read from byte 0: the record was not trusted
    expect(await hidden()).toEqual([]);
  });
});
