import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CancelledError } from '../../errors.js';
import { fastPathOn } from '../../fast-paths.js';
import { FaultPlan } from '../../../../test/emulators/shared/faults.js';
import { Latency } from '../../../../test/emulators/shared/latency.js';
import type { EmuNode } from '../../../../test/emulators/osf/state.js';
import { nodeId } from './ids.js';
import { OSF_IN_FLIGHT } from './osf-target.js';
import { entries, md5, osfFixture, writeOptions, type OsfFixture } from './test-helpers.js';

/**
 * `parallel-writes` on OSF: a write keeps OSF_IN_FLIGHT uploads under way (what WaterButler
 * sees, each request held 100 ms as a remote's round trip), and its outcome reads exactly as a
 * one-at-a-time write's would: every list in entry order, a per-file failure in its place,
 * each confirmed file told to the job (onFileWritten) in entry order with its stored record.
 * With the fast path off (FERRY_FAST_PATHS=-parallel-writes) one upload is under way at a time.
 */
const FILES = 20;
const names = Array.from({ length: FILES }, (_, i) => `Run/f${String(i).padStart(2, '0')}.txt`);
const content = (i: number) => `file ${i}\n`.repeat(20 + i);

describe('a parallel write to OSF (emulator, 100 ms a request)', () => {
  let f: OsfFixture;
  let project: EmuNode;
  let latency: Latency;
  let faults: FaultPlan;

  beforeEach(async () => {
    latency = new Latency(100);
    faults = new FaultPlan();
    f = await osfFixture({ latency, faults });
    project = f.emu.state.addNode({ title: 'Parallel', owner: f.userId });
  });
  afterEach(() => f.emu.close());

  const specs = () => [{ path: 'Run' }, ...names.map((path, i) => ({ path, content: content(i) }))];

  it('keeps its declared uploads in flight and reports them in entry order', async () => {
    // WaterButler refuses one file (quota): its failure keeps its place
    faults.add({ kind: 'status', status: 507, server: 'files', method: 'PUT', path: /name=f04\.txt/ });
    const written: string[] = [];
    const outcome = await f.target.write(f.ctx, nodeId(project.id), entries(specs()), { ...writeOptions('ignore'), onFileWritten: (path) => written.push(path) });
    const created = names.filter((name) => name !== 'Run/f04.txt');
    expect(outcome.created).toEqual(['Run', ...created]);
    expect(outcome.fileErrors).toEqual([{ path: 'Run/f04.txt', error: expect.stringMatching(/quota/i) }]);
    expect(written).toEqual(created);
    expect([...(outcome.stored?.keys() ?? [])]).toEqual(created);
    for (const [i, name] of names.entries()) if (name !== 'Run/f04.txt') expect(outcome.stored?.get(name)).toMatchObject({ hashes: { md5: md5(content(i)) } });
    expect(latency.mostUnderWay).toBe(fastPathOn('parallel-writes') ? OSF_IN_FLIGHT.files : 1);
  });

  it('makes a folder while the files before it are under way, not when its first file comes up', async () => {
    const ahead = ['a', 'b'].flatMap((letter) => Array.from({ length: 12 }, (_, i) => ({ path: `Ahead/${letter.toUpperCase()}/${letter}${String(i).padStart(2, '0')}.txt`, content: letter })));
    latency.reset();
    const outcome = await f.target.write(f.ctx, nodeId(project.id), entries(ahead), writeOptions('ignore'));
    expect(outcome.created).toEqual(['Ahead', 'Ahead/A', ...ahead.slice(0, 12).map((spec) => spec.path), 'Ahead/B', ...ahead.slice(12).map((spec) => spec.path)]);
    const arrived = (pattern: RegExp) => latency.arrivals.findIndex((request) => pattern.test(request));
    const folderB = arrived(/^PUT \S*kind=folder&name=B$/);
    expect(folderB).toBeGreaterThan(0);
    if (fastPathOn('parallel-writes')) {
      // made twice the uploads in flight ahead of its first file: while A's files still go up
      expect(folderB).toBeLessThan(arrived(/^PUT \S*kind=file&name=a08\.txt$/));
    } else expect(folderB).toBeGreaterThan(arrived(/^PUT \S*kind=file&name=a11\.txt$/));
  });

  it('stops at a cancel: nothing new starts, and only files OSF confirmed were told to the job, in entry order', async () => {
    const controller = new AbortController();
    const written: string[] = [];
    const options = {
      ...writeOptions('ignore'),
      signal: controller.signal,
      onFileWritten: (path: string) => {
        written.push(path);
        if (written.length === 3) controller.abort();
      },
    };
    await expect(f.target.write({ ...f.ctx, signal: controller.signal }, nodeId(project.id), entries(specs()), options)).rejects.toBeInstanceOf(CancelledError);
    expect(written).toEqual(names.slice(0, 3));
    const put = () => f.emu.state.requests.filter((r) => r.server === 'files' && r.method === 'PUT').length;
    // A request the cancel cut may still reach the emulator's handler after the write returned:
    // the Latency hold ends before the emulator has read that its client went away, on a busy
    // machine. So the uploads are counted once those have had their round trip; after that,
    // nothing new starts (the write sends nothing once it has returned).
    await new Promise((resolve) => setTimeout(resolve, 3 * latency.ms));
    const settled = put();
    await new Promise((resolve) => setTimeout(resolve, 3 * latency.ms));
    expect(put()).toBe(settled);
    expect(settled).toBeLessThan(1 + FILES);
  });
});
