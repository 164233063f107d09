// A conformance suite every Target runs, in the spirit of rclone's shared backend tests:
// the same checks, through the Target interface only, for local folders today and for
// OSF, GitHub, ... (against their emulators) later. A target passes by calling
//
//   describeTargetContract('osf', async () => ({ target, token, writableContainerId, teardown }));
//
// from one of its own *.test.ts files. Checks for actions a target does not support are
// skipped with a printed reason, never silently.

import { createHash, getHashes, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FerryError } from '../../electron/core/errors.js';
import type { Entry, ResourceNode, Target, TargetContext, WriteOutcome } from '../../electron/core/target.js';
import { collect } from './test-entries.js';
import { describeCapabilityContract } from './capability-contract.js';
import { describeWriteRules } from './write-rules.js';

export interface TargetFixture {
  target: Target;
  token: string;
  /** a token the service rejects (default: a made-up one) */
  badToken?: string;
  /** a container the suite may upload into */
  writableContainerId: string;
  /** ids known to exist */
  sampleFileId?: string;
  /**
   * An id well-formed for this target that names nothing (e.g. a deleted record's number);
   * the suite checks it gets 404 as well as its own made-up, ill-formed id.
   */
  missingId?: string;
  /**
   * Set for a target that has no folders inside a container (Zenodo, figshare): a written
   * `Top/sub/b.txt` is stored as one file named with the path's segments joined by
   * `separator` (`Top__sub__b.txt`). The writing checks then look for those names.
   */
  flatNamespace?: { separator: string };
  teardown(): Promise<void>;
}

/** The contract's one timestamp format (API.md). */
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;
/** What may not appear in an id: it must fit one path segment and split cleanly from `.json`/`.zip`. */
const UNSAFE_ID = /[./?#%\\\s]/;
/** How many nodes get a detail call, so big listings stay quick. */
const DETAIL_SAMPLE = 12;
/** How many entries of a read are checked. */
const READ_SAMPLE = 500;

export function describeTargetContract(name: string, setup: () => Promise<TargetFixture>): void {
  describe(`Target contract: ${name}`, () => {
    let fixture: TargetFixture;
    let nodes: ResourceNode[] = [];
    const context = (token = fixture.token): TargetContext => ({ token, signal: new AbortController().signal });
    const supports = (action: keyof Target['info']['supported_actions']) => fixture.target.info.supported_actions[action];
    const skipUnless = (action: keyof Target['info']['supported_actions'], skip: (note: string) => never) => {
      if (supports(action)) return;
      const reason = `${name} does not support ${action}`;
      console.info(`[target contract] skipped: ${reason}`);
      skip(reason);
    };

    beforeAll(async () => {
      fixture = await setup();
      if (supports('resource_collection')) nodes = await collect(fixture.target.list(context()));
    });

    afterAll(async () => {
      await fixture?.teardown();
    });

    it('declares its info', () => {
      const { info } = fixture.target;
      expect(info.name).toMatch(/^[a-z0-9_-]+$/);
      expect(info.readable_name.trim()).not.toBe('');
      expect(Object.keys(info.supported_actions).sort()).toEqual(['resource_collection', 'resource_detail', 'resource_download', 'resource_upload']);
      for (const flag of Object.values(info.supported_actions)) expect(typeof flag).toBe('boolean');
      for (const algorithm of info.supported_hash_algorithms) expect(algorithm).toMatch(/^[a-z0-9-]+$/);
      expect(['access-key', 'remote']).toContain(info.credential);
    });

    it('lists a consistent flat collection', ({ skip }) => {
      skipUnless('resource_collection', skip);
      expect(nodes.length).toBeGreaterThan(0);
      const byId = new Map(nodes.map((node) => [node.id, node]));
      expect(byId.size, 'ids are unique').toBe(nodes.length);
      for (const node of nodes) {
        expect(node.id, 'id is path-safe and has no dot').not.toMatch(UNSAFE_ID);
        if (fixture.target.info.plainIds) expect(node.id, 'plainIds: base64url-alphabet only').toMatch(/^[A-Za-z0-9_-]+$/);
        expect(node.id).not.toBe('');
        expect(typeof node.title).toBe('string');
        expect(node.kind_name).toBe(node.kind === 'container' ? 'folder' : 'file');
        expect(['container', 'item']).toContain(node.kind);
        if (node.container !== null) {
          const parent = byId.get(node.container);
          expect(parent, `the container of '${node.title}' is listed`).toBeDefined();
          expect(parent!.kind).toBe('container');
        }
      }
    });

    it('lists the top level and a container\'s children as the flat listing does', async ({ skip }) => {
      skipUnless('resource_collection', skip);
      // a target that also lists in batches gives the same nodes, in the same order, both ways
      const { listBatches } = fixture.target;
      if (listBatches) {
        expect((await collect(listBatches.call(fixture.target, context()))).flat()).toEqual(nodes);
        expect((await collect(listBatches.call(fixture.target, context(), { container: null }))).flat()).toEqual(await collect(fixture.target.list(context(), { container: null })));
      }
      const top = await collect(fixture.target.list(context(), { container: null }));
      expect(ids(top)).toEqual(ids(nodes.filter((node) => node.container === null)));
      expect(top.every((node) => node.container === null)).toBe(true);
      const containers = nodes.filter((node) => node.kind === 'container').slice(0, 5);
      for (const container of containers) {
        const children = await collect(fixture.target.list(context(), { container: container.id }));
        expect(ids(children), `children of '${container.title}'`).toEqual(ids(nodes.filter((node) => node.container === container.id)));
      }
    });

    it('gives details that match the listing, in the contract formats', async ({ skip }) => {
      skipUnless('resource_detail', skip);
      const supported = new Set(fixture.target.info.supported_hash_algorithms);
      const sample = sampleOf(nodes, DETAIL_SAMPLE);
      const sampleIds = new Set(sample.map((node) => node.id));
      if (fixture.sampleFileId) sampleIds.add(fixture.sampleFileId);
      sampleIds.add(fixture.writableContainerId);
      expect(sampleIds.size).toBeGreaterThan(0);
      for (const id of sampleIds) {
        const detail = await fixture.target.detail(context(), id);
        const listed = nodes.find((node) => node.id === id);
        expect(detail.id).toBe(id);
        if (listed) {
          const { kind, kind_name, container, title } = detail;
          expect({ id, kind, kind_name, container, title }).toEqual(listed);
        }
        expect(detail.kind_name).toBe(detail.kind === 'container' ? 'folder' : 'file');
        for (const time of [detail.date_created, detail.date_modified]) if (time !== null) expect(time).toMatch(TIMESTAMP);
        if (detail.kind === 'container') expect(detail.hashes).toEqual({});
        for (const [algorithm, value] of Object.entries(detail.hashes)) {
          expect(supported.has(algorithm), `hash '${algorithm}' is a supported algorithm`).toBe(true);
          expect(value).toMatch(/^[0-9a-f]+$/);
        }
        expect(typeof detail.extra).toBe('object');
        expect(() => JSON.stringify(detail)).not.toThrow();
      }
    });

    it('answers 404 for an id that does not exist', async ({ skip }) => {
      skipUnless('resource_detail', skip);
      // Ids are opaque to clients, so a string this target could never have made is, to a
      // client, just as much "no such resource" as a well-formed id that names nothing.
      const missing = ['ferryContractNoSuchResource0', ...(fixture.missingId ? [fixture.missingId] : [])];
      for (const id of missing) await expectFerryError(fixture.target.detail(context(), id), 404, 'resource_not_found');
    });

    it('reads a container as entries under its title', async ({ skip }) => {
      skipUnless('resource_download', skip);
      const id = nodes.find((node) => node.kind === 'container')?.id ?? fixture.writableContainerId;
      const result = await fixture.target.read(context(), id);
      expect(result.root.id).toBe(id);
      expect(result.root.kind).toBe('container');
      expect(result.title).toBe(result.root.title);
      let count = 0;
      for await (const entry of result.entries) {
        expect(entry.path === result.title || entry.path.startsWith(`${result.title}/`), `'${entry.path}' is under '${result.title}'`).toBe(true);
        expect(['file', 'folder']).toContain(entry.kind);
        count += 1;
        if (count >= READ_SAMPLE) break;
      }
    });

    it('reads a file as one entry whose bytes match its size and hashes', async ({ skip }) => {
      skipUnless('resource_download', skip);
      const id = fixture.sampleFileId ?? nodes.find((node) => node.kind === 'item')?.id;
      if (!id) {
        console.info(`[target contract] skipped: ${name} lists no file and the fixture names none`);
        return skip('no file to read');
      }
      const result = await fixture.target.read(context(), id);
      const entries = await collect(result.entries);
      expect(entries).toHaveLength(1);
      const [entry] = entries;
      expect(entry!.path).toBe(result.title);
      expect(entry!.kind).toBe('file');
      const bytes = await readAll(entry!);
      if (entry!.size !== null) expect(bytes.length).toBe(entry!.size);
      const known = { ...entry!.hashes, ...(supports('resource_detail') ? (await fixture.target.detail(context(), id)).hashes : {}) };
      for (const [algorithm, value] of Object.entries(known)) {
        const actual = digestOf(algorithm, bytes);
        if (actual === null) {
          console.info(`[target contract] ${name}: cannot compute '${algorithm}' here, so that hash of the file is not checked`);
          continue;
        }
        expect(actual, algorithm).toBe(value);
      }
    });

    describe('writing', () => {
      const folder = `ferry-contract-${randomBytes(4).toString('hex')}`;
      const tree = { [`${folder}/`]: null, [`${folder}/a.txt`]: 'alpha\n', [`${folder}/sub/b.txt`]: 'bravo\n', [`${folder}/c.txt`]: 'charlie\n' };
      const files = [`${folder}/a.txt`, `${folder}/sub/b.txt`, `${folder}/c.txt`];
      const write = (containerId: string | null, entries: Record<string, string | null>, duplicateAction: 'ignore' | 'update'): Promise<WriteOutcome> =>
        fixture.target.write(context(), containerId, entriesOf(entries), { duplicateAction, signal: new AbortController().signal, jobLabel: `Ferry contract test ${name}` });

      /** The writable container now holds exactly `written`'s files, with its bytes, as this target stores them. */
      const expectStored = async (written: Record<string, string | null>) => {
        if (!supports('resource_collection')) return;
        const children = await collect(fixture.target.list(context(), { container: fixture.writableContainerId }));
        const flat = fixture.flatNamespace;
        if (!flat) {
          const top = children.find((node) => node.title === folder);
          expect(top?.kind, `'${folder}' is listed as a folder`).toBe('container');
          if (supports('resource_download')) expect(await contentsOf(fixture.target, context(), top!.id)).toEqual(stripFolders(written));
          return;
        }
        // No folders here: nothing named after the top folder, one file per written path.
        expect(children.filter((node) => node.title === folder), `a flat target lists no '${folder}'`).toEqual([]);
        for (const [path, content] of Object.entries(stripFolders(written))) {
          const storedName = path.split('/').join(flat.separator);
          const matches = children.filter((node) => node.title === storedName);
          expect(matches.map((node) => node.kind), `'${path}' is stored once, as the file '${storedName}'`).toEqual(['item']);
          if (supports('resource_download')) {
            const read = await fixture.target.read(context(), matches[0]!.id);
            expect(read.title).toBe(storedName);
            expect(await contentsOfRead(read.entries)).toEqual({ [storedName]: content });
          }
        }
      };

      it('writes a small tree into a container and reports it created', async ({ skip }) => {
        skipUnless('resource_upload', skip);
        const outcome = await write(fixture.writableContainerId, tree, 'ignore');
        expect(outcome.fileErrors).toEqual([]);
        for (const file of files) expect(outcome.created).toContain(file);
        expect(outcome.updated).toEqual([]);
        expect(outcome.newResource).toBeUndefined();
        // A flat target never flattens silently: the job's notes say the folders were not kept.
        if (fixture.flatNamespace) expect(outcome.notes).toEqual(expect.arrayContaining([expect.stringMatching(/keeps no folders/)]));
        await expectStored(tree);
      });

      it('writes the same tree again with ignore: every file ignored, nothing created', async ({ skip }) => {
        skipUnless('resource_upload', skip);
        const outcome = await write(fixture.writableContainerId, { ...tree, [`${folder}/a.txt`]: 'changed but ignored\n' }, 'ignore');
        expect(outcome.fileErrors).toEqual([]);
        expect(outcome.created.filter((path) => files.includes(path))).toEqual([]);
        expect(outcome.updated).toEqual([]);
        expect([...outcome.ignored].sort()).toEqual([...files].sort());
      });

      it('writes with update and one changed file: exactly that one updated', async ({ skip }) => {
        skipUnless('resource_upload', skip);
        const changed = { ...tree, [`${folder}/sub/b.txt`]: 'bravo, changed\n' };
        const outcome = await write(fixture.writableContainerId, changed, 'update');
        expect(outcome.fileErrors).toEqual([]);
        expect(outcome.updated).toEqual([`${folder}/sub/b.txt`]);
        expect(outcome.created.filter((path) => files.includes(path))).toEqual([]);
        expect([...outcome.ignored].sort()).toEqual([`${folder}/a.txt`, `${folder}/c.txt`]);
        await expectStored(changed);
      });

      it('writes a new top-level resource and lists it at the top level', async ({ skip }) => {
        skipUnless('resource_upload', skip);
        const top = `${folder}-top`;
        const outcome = await write(null, { [`${top}/`]: null, [`${top}/readme.txt`]: 'top level\n' }, 'ignore');
        expect(outcome.fileErrors).toEqual([]);
        expect(outcome.newResource).toBeDefined();
        expect(outcome.newResource!.id).not.toMatch(UNSAFE_ID);
        expect(outcome.newResource!.title).not.toBe('');
        if (supports('resource_collection')) {
          const listed = (await collect(fixture.target.list(context(), { container: null }))).find((node) => node.id === outcome.newResource!.id);
          expect(listed?.title).toBe(outcome.newResource!.title);
        }
      });
    });

    describeWriteRules(name, () => fixture);

    it('rejects a bad token with FerryError 401', async ({ skip }) => {
      if (fixture.target.info.credential !== 'remote') {
        const reason = `${name} takes Ferry's access key, which the HTTP layer checks before the target is called`;
        console.info(`[target contract] skipped: ${reason}`);
        skip(reason);
      }
      const bad = context(fixture.badToken ?? 'ferry-contract-bad-token');
      await expectFerryError(
        supports('resource_collection') ? collect(fixture.target.list(bad)) : fixture.target.detail(bad, fixture.writableContainerId),
        401,
      );
    });

    describeCapabilityContract(name, () => fixture, setup);
  });
}

const ids = (nodes: ResourceNode[]) => nodes.map((node) => node.id).sort();

/** Some containers and some items, spread over the listing. */
function sampleOf(nodes: ResourceNode[], count: number): ResourceNode[] {
  const containers = nodes.filter((node) => node.kind === 'container');
  const items = nodes.filter((node) => node.kind === 'item');
  const spread = (list: ResourceNode[], n: number) => (list.length <= n ? list : Array.from({ length: n }, (_, i) => list[Math.floor((i * list.length) / n)]!));
  return [...spread(containers, Math.ceil(count / 3)), ...spread(items, count - Math.ceil(count / 3))];
}

async function expectFerryError(promise: Promise<unknown>, status: number, code?: string): Promise<void> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error, `expected a FerryError ${status}`).toBeInstanceOf(FerryError);
  expect((error as FerryError).status).toBe(status);
  if (code) expect((error as FerryError).code).toBe(code);
  expect((error as FerryError).message.trim(), 'the error says what to do in a sentence').toMatch(/\S.*\S/);
}

/**
 * The lowercase hex digest of `bytes`, or null for an algorithm this suite cannot compute.
 * `git-sha1` is git's blob id (GitHub's file `sha`): sha1 over `blob <size>\0` and the bytes.
 */
function digestOf(algorithm: string, bytes: Buffer): string | null {
  if (algorithm === 'git-sha1') return createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
  if (!getHashes().includes(algorithm)) return null;
  return createHash(algorithm).update(bytes).digest('hex');
}

/** Entries from { 'Top/': null, 'Top/a.txt': 'bytes' } (folders end with '/'). */
async function* entriesOf(tree: Record<string, string | null>): AsyncGenerator<Entry> {
  for (const [key, content] of Object.entries(tree)) {
    const isFolder = key.endsWith('/');
    const bytes = Buffer.from(content ?? '');
    yield {
      path: isFolder ? key.slice(0, -1) : key,
      kind: isFolder ? 'folder' : 'file',
      size: isFolder ? null : bytes.length,
      mtime: new Date('2024-05-06T07:08:09.000Z'),
      hashes: {},
      open: async () => Readable.from([bytes]),
    };
  }
}

function stripFolders(tree: Record<string, string | null>): Record<string, string> {
  return Object.fromEntries(Object.entries(tree).filter((pair): pair is [string, string] => pair[1] !== null));
}

async function readAll(entry: Entry): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of await entry.open()) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks);
}

/** A resource's files and their text, keyed by entry path. */
async function contentsOf(target: Target, context: TargetContext, id: string): Promise<Record<string, string>> {
  return contentsOfRead((await target.read(context, id)).entries);
}

async function contentsOfRead(entries: AsyncIterable<Entry>): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for await (const entry of entries) {
    if (entry.kind === 'file') files[entry.path] = (await readAll(entry)).toString('utf8');
  }
  return files;
}
