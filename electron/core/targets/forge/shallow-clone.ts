import fs from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import git from 'isomorphic-git';
import { FerryError } from '../../errors.js';
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

  private async dir(): Promise<string> {
    this.gitdir ??= (async () => {
      const dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-git-'));
      await git.init({ fs, gitdir: dir, bare: true, defaultBranch: 'main' });
      await git.setConfig({ fs, gitdir: dir, path: 'remote.origin.fetch', value: '+refs/heads/*:refs/remotes/origin/*' });
      return dir;
    })();
    return this.gitdir;
  }

  /** The branch's head commit, fetched; null for an empty repository (no commit on it yet). */
  async fetchHead(http: GitHttp, branch: string | null): Promise<{ oid: string; branch: string } | null> {
    const gitdir = await this.dir();
    let result: Awaited<ReturnType<typeof git.fetch>>;
    try {
      result = await git.fetch({ fs, http: http.client(), gitdir, url: http.endpoint.url, ...(branch ? { ref: branch } : {}), singleBranch: true, depth: 1, tags: false });
    } catch (error) {
      // an empty repository advertises no branch to fetch
      if ((error as { code?: string }).code === 'NotFoundError' && !(await hasRefs(http))) return null;
      rethrow(error);
    }
    if (!result.fetchHead) return null;
    return { oid: result.fetchHead, branch: branch ?? result.defaultBranch?.replace(/^refs\/heads\//, '') ?? 'main' };
  }

  /** Every entry of the commit's tree, depth-first, with blob sizes. */
  async flat(commitOid: string): Promise<(FlatItem & { size?: number })[]> {
    const gitdir = await this.dir();
    const { commit } = await git.readCommit({ fs, gitdir, oid: commitOid });
    const items: (FlatItem & { size?: number })[] = [];
    const walk = async (treeOid: string, prefix: string) => {
      const { tree } = await git.readTree({ fs, gitdir, oid: treeOid });
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
    const { blob } = await git.readBlob({ fs, gitdir: await this.dir(), oid });
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

function rethrow(error: unknown): never {
  if (error instanceof FerryError) throw error;
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof FerryError) throw cause;
  throw new FerryError(502, 'upstream_error', `Reading the repository through git failed (${(error as Error).message}); try again.`);
}
