// The capability half of the shared target suite: every capability a target declares
// (TargetCapabilities, and ReadResult.directFiles on its reads) is a fast path, and a
// fast path never changes what is written or reported. So each one the target has is hidden
// in turn (withoutCapability: the target as it would be without it) and the results compared
// with the target's own: the same rows, the same listing bytes over HTTP, the same bag bytes,
// the same write outcome and stored files, in one test per target. A target that declares
// none says so and skips.

import { describe, expect, it } from 'vitest';
import { NodeColumns } from '../../electron/core/node-columns.js';
import type { ReadResult, ResourceNode, Target, TargetCapabilities, TargetContext, WriteOptions, WriteOutcome } from '../../electron/core/target.js';
import type { StagedWriteOptions } from '../../electron/core/jobs/staged-write.js';
import { writeBagZip } from '../../electron/core/bag/bag-writer.js';
import { summaryWriter } from '../../electron/server/routes/resources.js';
import { inBatches, jsonArrayStream } from '../../electron/server/stream-json.js';
import { collect, entriesFrom } from './test-entries.js';

/** What the capability suite needs of a target's fixture. */
export interface CapabilityFixture {
  target: Target;
  token: string;
  writableContainerId: string;
}

/** A capability a target may have: its declared ones, and that of its reads. */
export type CapabilityName = keyof TargetCapabilities | 'directFiles';

/**
 * `target` as it would be without `name`: the capability is gone from `capabilities` or
 * (for 'directFiles') from its reads; everything else is the target's own.
 */
export function withoutCapability(target: Target, name: CapabilityName): Target {
  return new Proxy(target, {
    get(inner, property) {
      if (property === 'capabilities') {
        const { [name as keyof TargetCapabilities]: _hidden, ...rest } = inner.capabilities ?? {};
        return rest;
      }
      if (property === 'read' && name === 'directFiles') {
        return async (ctx: TargetContext, id: string): Promise<ReadResult> => {
          const { directFiles: _hidden, ...read } = await inner.read(ctx, id);
          return read;
        };
      }
      const value: unknown = Reflect.get(inner, property, inner);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(inner) : value;
    },
  });
}

const BASE = 'http://127.0.0.1:8765';
/** a fixed bagging date: two bags of the same files are then the same bytes */
const BAGGED_AT = new Date('2024-05-06T07:08:09.000Z');

/**
 * `fixtureOf`: the suite's fixture; `setup`: a fresh one (a first listing may differ from a
 * repeated one: the offline target lists an archive as columns only the first time).
 */
export function describeCapabilityContract(name: string, fixtureOf: () => CapabilityFixture, setup: () => Promise<CapabilityFixture & { teardown(): Promise<void> }>): void {
  describe(`Target capabilities: ${name} (each hidden in turn gives the same results)`, () => {
    const context = (): TargetContext => ({ token: fixtureOf().token, signal: new AbortController().signal });
    const target = () => fixtureOf().target;
    /** The JSON of `batches` as the HTTP layer sends `of`'s full listing. */
    const json = async (of: Target, batches: AsyncIterable<readonly ResourceNode[] | NodeColumns>): Promise<string> => {
      const stream = await jsonArrayStream(batches, summaryWriter(BASE, of.info.name, of.info.plainIds), `${BASE} ${of.info.name}`, {
        isKept: of.capabilities?.cacheableListings?.isKept,
      });
      return Buffer.concat(await collect(stream)).toString('utf8');
    };
    /** The full listing's JSON as the HTTP layer sends it, in batches (kept ones where the target keeps them). */
    const listingJson = (of: Target): Promise<string> => json(of, of.listBatches ? of.listBatches(context()) : inBatches(of.list(context())));

    /** columnarListing hidden: the same rows, in the same order, and the same listing bytes */
    const columnarListing = async () => {
      const fresh = await setup();
      try {
        // the first listing of a fresh target, where columns come if they ever do
        const batches = await collect(fresh.target.capabilities!.columnarListing!.listColumns(context()));
        if (!batches.some((batch) => batch instanceof NodeColumns)) console.info(`[target contract] ${name}: a first listing came without columns`);
        const rows = batches.flatMap((batch) => (batch instanceof NodeColumns ? Array.from({ length: batch.count }, (_, row) => batch.node(row)) : batch));
        const plain = withoutCapability(fresh.target, 'columnarListing');
        expect(rows).toEqual(await collect(plain.list(context())));
        expect(await json(fresh.target, (async function* () { yield* batches; })())).toBe(await listingJson(plain));
      } finally {
        await fresh.teardown();
      }
    };

    /** cacheableListings hidden: every listing, kept or not, sends the same bytes */
    const cacheableListings = async () => {
      const plain = withoutCapability(target(), 'cacheableListings');
      // a target keeps batches from a repeated listing on: list a few times
      let kept = 0;
      for (let listing = 0; listing < 3; listing++) {
        expect(await listingJson(target()), `listing ${listing + 1}`).toBe(await listingJson(plain));
        for await (const batch of target().listBatches?.(context()) ?? []) if (target().capabilities!.cacheableListings!.isKept(batch)) kept += 1;
      }
      if (kept === 0) console.info(`[target contract] ${name}: no batch was kept in three listings (a fixture too fresh to trust?); the bytes were compared all the same`);
      for await (const batch of target().listBatches?.(context()) ?? []) {
        if (target().capabilities!.cacheableListings!.isKept(batch)) expect(Object.isFrozen(batch), 'a kept batch is frozen').toBe(true);
      }
    };

    /** stagedWrites hidden: the same outcome and the same stored files; a failing check leaves nothing */
    const stagedWrites = async () => {
      const plain = withoutCapability(target(), 'stagedWrites');
      const tree = (top: string) => entriesFrom({ [`${top}/`]: null, [`${top}/a.txt`]: 'alpha\n', [`${top}/sub/b.txt`]: 'bravo\n' });
      const { writableContainerId } = fixtureOf();
      const options = (): WriteOptions => ({ duplicateAction: 'ignore', signal: new AbortController().signal, jobLabel: `Ferry capability test ${name}` });
      let checked = 0;
      const staged: StagedWriteOptions = { ...options(), beforeCommit: async () => void (checked += 1) };
      const top = `ferry-capability-${Date.now().toString(36)}`;
      const withStaging = await target().write(context(), writableContainerId, tree(`${top}-staged`), staged);
      const without = await plain.write(context(), writableContainerId, tree(`${top}-plain`), options());
      expect(checked, 'beforeCommit was asked once').toBe(1);
      expect(renamed(withStaging, `${top}-staged`, top)).toEqual(renamed(without, `${top}-plain`, top));
      expect(await storedFiles(target(), context(), writableContainerId, `${top}-staged`)).toEqual(await storedFiles(plain, context(), writableContainerId, `${top}-plain`));

      const refused: StagedWriteOptions = { ...options(), beforeCommit: () => Promise.reject(new Error('the check failed')) };
      await expect(target().write(context(), writableContainerId, tree(`${top}-refused`), refused)).rejects.toThrow('the check failed');
      const children = await collect(target().list(context(), { container: writableContainerId }));
      expect(children.map((node) => node.title)).not.toContain(`${top}-refused`);
    };

    /** A folder whose read offers directFiles, or null (the target reads no folder that way). */
    const directFolder = async (): Promise<ResourceNode | null> => {
      if (!target().info.supported_actions.resource_download) return null;
      const folder = (await collect(target().list(context()))).find((node) => node.kind === 'container');
      if (!folder) return null;
      const probe = await target().read(context(), folder.id);
      await probe.entries[Symbol.asyncIterator]().return?.();
      return probe.directFiles ? folder : null;
    };

    /** directFiles hidden: a download of the folder is the same bag, byte for byte */
    const directFiles = async (folder: ResourceNode) => {
      const bag = async (of: Target) =>
        Buffer.concat(await collect(writeBagZip(await of.read(context(), folder.id), { targetName: name, resourceId: folder.id, bagName: 'bag', now: BAGGED_AT })));
      // once first: a target may remember digests from a read (local), which a later bag reports
      await bag(target());
      const plainBag = await bag(withoutCapability(target(), 'directFiles'));
      expect((await bag(target())).equals(plainBag)).toBe(true);
    };

    // One test per target, running a check for each capability it has: a capability it does
    // not declare has nothing to compare (the rest of the suite tests the contract's own path).
    it('each capability it declares, hidden in turn, gives the same results', async ({ skip }) => {
      const declared = target().capabilities ?? {};
      const checks: [string, () => Promise<void>][] = [];
      if (declared.columnarListing) checks.push(['columnarListing', columnarListing]);
      if (declared.cacheableListings) checks.push(['cacheableListings', cacheableListings]);
      if (declared.stagedWrites && target().info.supported_actions.resource_upload) checks.push(['stagedWrites', stagedWrites]);
      const folder = await directFolder();
      if (folder) checks.push(['directFiles', () => directFiles(folder)]);
      if (checks.length === 0) {
        const reason = `${name} declares no capability beyond the contract (columnarListing, cacheableListings, stagedWrites) and its reads offer no directFiles`;
        console.info(`[target contract] skipped: ${reason}`);
        return skip(reason);
      }
      for (const [capability, check] of checks) {
        try {
          await check();
        } catch (error) {
          if (error instanceof Error) error.message = `${capability} hidden: ${error.message}`;
          throw error;
        }
      }
    });
  });
}

/** The outcome with the top folder's name `from` as `to` (two writes of one tree under two names). */
function renamed(outcome: WriteOutcome, from: string, to: string): WriteOutcome {
  const renameOne = (path: string) => (path === from || path.startsWith(`${from}/`) ? to + path.slice(from.length) : path);
  const rename = (paths: string[]) => paths.map(renameOne).sort();
  const stored = outcome.stored && new Map([...outcome.stored].map(([path, record]) => [renameOne(path), record] as const));
  return { ...outcome, created: rename(outcome.created), updated: rename(outcome.updated), ignored: rename(outcome.ignored), ...(stored ? { stored } : {}) };
}

/** The files under `title` in the container, by path below it, with their bytes as text. */
async function storedFiles(target: Target, ctx: TargetContext, containerId: string, title: string): Promise<Record<string, string>> {
  const top = (await collect(target.list(ctx, { container: containerId }))).find((node) => node.title === title);
  expect(top, `'${title}' was written`).toBeDefined();
  const files: Record<string, string> = {};
  for await (const entry of (await target.read(ctx, top!.id)).entries) {
    if (entry.kind === 'file') files[entry.path.slice(title.length)] = Buffer.concat(await collect(await entry.open())).toString('utf8');
  }
  return files;
}
