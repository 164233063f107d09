import fs from 'node:fs';
import { createHash } from 'node:crypto';
import { mkdtemp, open, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import git from 'isomorphic-git';
import { CancelledError, FerryError } from '../../errors.js';
import { sleep } from './rate-limit.js';
import type { GitHttp } from './git-http.js';
import type { FlatItem } from './tree-builder.js';

/**
 * A repository read through git's own protocol: a shallow fetch (depth 1, one branch, no tags)
 * of the branch's head into a private temporary object store, with isomorphic-git. One fetch
 * is two requests (the ref advertisement and one packfile) however many files the repository
 * holds; a later fetch into the same store sends what it has, so only new objects come.
 * The store lives in a fresh mkdtemp folder (mode 0700) and is removed by `dispose()`.
 */
export class ShallowClone {
  private gitdir: Promise<string> | null = null;
  /** isomorphic-git's parsed pack indexes, kept between reads (without it every read re-parses them); renewed after each fetch */
  private cache: object = {};

  private async dir(): Promise<string> {
    this.gitdir ??= (async () => {
      const dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-git-'));
      await git.init({ fs, gitdir: dir, bare: true, defaultBranch: 'main' });
      await git.setConfig({ fs, gitdir: dir, path: 'remote.origin.fetch', value: '+refs/heads/*:refs/remotes/origin/*' });
      return dir;
    })();
    return this.gitdir;
  }

  /** fetches into this store run one at a time: two at once would write the same refs and shallow file */
  private queue: Promise<unknown> = Promise.resolve();

  /** The branch's head commit, fetched; null for an empty repository (no commit on it yet). */
  fetchHead(http: GitHttp, branch: string | null): Promise<{ oid: string; branch: string } | null> {
    const run = this.queue.then(() => this.fetchNow(http, branch));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async fetchNow(http: GitHttp, branch: string | null): Promise<{ oid: string; branch: string } | null> {
    let result: Awaited<ReturnType<typeof git.fetch>> | null = null;
    // a fetch changes nothing on the host: one that failed on the way (busy, broken, a bad pack) is sent again
    for (let attempt = 1; !result; attempt++) {
      try {
        const store = await this.dir();
        const fetched = await git.fetch({ fs, http: http.client(), gitdir: store, url: http.endpoint.url, ...(branch ? { ref: branch } : {}), singleBranch: true, depth: 1, tags: false });
        // isomorphic-git names the stored pack in its result, though its typings omit it
        const packfile = (fetched as { packfile?: string }).packfile;
        if (packfile) await checkPack(path.join(store, packfile), http.endpoint.service);
        result = fetched;
      } catch (error) {
        // whatever the failed fetch left (a damaged pack, a moved shallow boundary) is thrown away
        await this.dispose();
        // an empty repository advertises no branch to fetch
        if ((error as { code?: string }).code === 'NotFoundError' && !(await hasRefs(http))) return null;
        const failure = asFerryError(error);
        if (attempt >= FETCH_ATTEMPTS || ![429, 502, 503, 504].includes(failure.status)) throw failure;
        await sleep(failure.retryAfter ? Math.min(failure.retryAfter, 60) * 1000 : 250 * 2 ** attempt, http.signal);
      }
    }
    this.cache = {};
    if (!result.fetchHead) return null;
    return { oid: result.fetchHead, branch: branch ?? result.defaultBranch?.replace(/^refs\/heads\//, '') ?? 'main' };
  }

  /** Every entry of the commit's tree, depth-first, with blob sizes. */
  async flat(commitOid: string): Promise<(FlatItem & { size?: number })[]> {
    const gitdir = await this.dir();
    const { commit } = await git.readCommit({ fs, gitdir, oid: commitOid, cache: this.cache });
    const items: (FlatItem & { size?: number })[] = [];
    const walk = async (treeOid: string, prefix: string) => {
      const { tree } = await git.readTree({ fs, gitdir, oid: treeOid, cache: this.cache });
      for (const e of tree) {
        const item = { path: prefix + e.path, type: e.type, mode: e.mode, oid: e.oid };
        items.push(item);
        if (e.type === 'tree') await walk(e.oid, `${item.path}/`);
      }
    };
    await walk(commit.tree, '');
    return items;
  }

  /** A blob's bytes (isomorphic-git reads an object whole). */
  async blob(oid: string): Promise<Buffer> {
    const { blob } = await git.readBlob({ fs, gitdir: await this.dir(), oid, cache: this.cache });
    return Buffer.from(blob);
  }

  async dispose(): Promise<void> {
    const dir = await this.gitdir?.catch(() => null);
    this.gitdir = null;
    if (dir) await rm(dir, { recursive: true, force: true });
  }
}

async function hasRefs(http: GitHttp): Promise<boolean> {
  const info = await git.getRemoteInfo2({ http: http.client(), url: http.endpoint.url, protocolVersion: 1 }).catch(rethrow);
  return (info.refs ?? []).length > 0;
}

const FETCH_ATTEMPTS = 4;

/**
 * isomorphic-git stores a fetched pack without checking its trailing SHA-1 (its own TODO in
 * `_fetch`); a pack damaged on the way would leave objects missing under their ids. Ferry checks
 * the trailer itself, so a damaged pack is fetched again instead of failing later.
 */
async function checkPack(file: string, service: string): Promise<void> {
  const hash = createHash('sha1');
  const size = (await stat(file)).size;
  if (size < 32) throw new FerryError(502, 'upstream_error', `${service} sent a damaged packfile; try again.`);
  const stream = fs.createReadStream(file, { end: size - 21 });
  for await (const chunk of stream) hash.update(chunk as Buffer);
  const handle = await open(file, 'r');
  const trailer = Buffer.alloc(20);
  await handle.read(trailer, 0, 20, size - 20);
  await handle.close();
  if (!hash.digest().equals(trailer)) throw new FerryError(502, 'upstream_error', `${service} sent a packfile whose checksum does not match (damaged on the way); nothing was kept.`);
}

function rethrow(error: unknown): never {
  throw asFerryError(error);
}

function asFerryError(error: unknown): FerryError {
  if (error instanceof FerryError) return error;
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof FerryError) return cause;
  if (error instanceof CancelledError) throw error;
  return new FerryError(502, 'upstream_error', `Reading the repository through git failed (${(error as Error).message}); try again.`);
}

