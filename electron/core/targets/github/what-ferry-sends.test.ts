import http from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startGithubEmulator, type GithubEmulator } from '../../../../test/emulators/github/server.js';
import { collect, drain, entriesFrom, writeOptions } from '../../../../test/target-suite/test-entries.js';
import { makeConfig } from '../../config.js';
import { MemorySecretStore } from '../../keychain/memory.js';
import type { Target, TargetContext } from '../../target.js';
import { createGithubTarget } from './index.js';

/**
 * "What Ferry sends" to GitHub: every request of a listing, a download, an upload into a
 * container and a new top-level upload must be a row of docs/targets/github.md's evidence
 * table (the `row` names below), no REST request may create content per file (GitHub's
 * secondary limits: 80 a minute, 500 an hour), and the token goes to the API host and
 * GitHub's git host only.
 */
const EVIDENCE: { row: string; method: string; path: RegExp; contentCreating?: true }[] = [
  { row: 'list repositories', method: 'GET', path: /^\/user\/repos$/ },
  { row: 'repository by id', method: 'GET', path: /^\/repositories\/\d+$/ },
  { row: 'tree (recursive)', method: 'GET', path: /^\/repos\/[^/]+\/[^/]+\/git\/trees\/[^/]+$/ },
  { row: 'blob (raw)', method: 'GET', path: /^\/repos\/[^/]+\/[^/]+\/git\/blobs\/[0-9a-f]{40}$/ },
  { row: 'last commit of a path', method: 'GET', path: /^\/repos\/[^/]+\/[^/]+\/commits$/ },
  { row: 'the token\'s user', method: 'GET', path: /^\/user$/ },
  { row: 'create repository', method: 'POST', path: /^\/user\/repos$/, contentCreating: true },
  { row: 'ref advertisement (git)', method: 'GET', path: /^\/[^/]+\/[^/]+\.git\/info\/refs$/ },
  { row: 'push (git)', method: 'POST', path: /^\/[^/]+\/[^/]+\.git\/git-receive-pack$/ },
  { row: 'shallow fetch (git)', method: 'POST', path: /^\/[^/]+\/[^/]+\.git\/git-upload-pack$/ },
  { row: 'Git LFS batch', method: 'POST', path: /^\/[^/]+\/[^/]+\.git\/info\/lfs\/objects\/batch$/ },
  { row: 'Git LFS object upload (the action\'s href)', method: 'PUT', path: /^\/lfs-storage\/[0-9a-f]{64}$/ },
];

const TOKEN = 'ghp_what_ferry_sends';
let emu: GithubEmulator;
let target: Target;
const ctx = (): TargetContext => ({ token: TOKEN, signal: new AbortController().signal });

beforeEach(async () => {
  emu = await startGithubEmulator();
  emu.state.tokens.set(TOKEN, { id: 3, login: 'carol' });
  target = createGithubTarget(makeConfig({ remotes: { ...makeConfig().remotes, githubApiUrl: emu.url } }), new MemorySecretStore(), { writeSpacingMs: 0, maxRateWaitMs: 2000 });
});
afterEach(async () => {
  await emu.close();
});

function rowsOf(requests: string[]): string[] {
  return requests.map((request) => {
    const [method, path] = request.split(' ') as [string, string];
    const row = EVIDENCE.find((e) => e.method === method && e.path.test(path));
    expect(row, `${request} is a row of docs/targets/github.md`).toBeDefined();
    return row!.row;
  });
}

describe('what Ferry sends to GitHub', () => {
  it('a listing, a download, an upload into a container and a new top-level upload: only documented requests, one content-creating request at most', async () => {
    const repo = emu.state.addRepo({ id: 3, login: 'carol' }, 'study', { 'data/a.csv': '1,2\n', 'README.md': 'hi' });
    const files: Record<string, string | null> = {};
    for (let i = 0; i < 120; i++) files[`batch/f${i}.txt`] = `file ${i}`;

    const steps: Record<string, () => Promise<unknown>> = {
      listing: () => collect(target.list(ctx())),
      download: async () => drain((await target.read(ctx(), `r${repo.id}`)).entries),
      'upload into a container': () => target.write(ctx(), `r${repo.id}`, entriesFrom(files), writeOptions()),
      'new top-level upload': () => target.write(ctx(), null, entriesFrom({ 'Fresh/': null, 'Fresh/x.txt': 'x', 'Fresh/d/y.txt': 'y' }), writeOptions()),
    };
    const seen: Record<string, string[]> = {};
    for (const [name, step] of Object.entries(steps)) {
      const before = emu.state.requests.length;
      await step();
      seen[name] = rowsOf(emu.state.requests.slice(before));
    }
    // a whole repository: one REST lookup and one shallow fetch, however many files
    expect(seen.download).toEqual(['repository by id', 'ref advertisement (git)', 'shallow fetch (git)']);
    expect(seen['upload into a container']).toEqual(['repository by id', 'the token\'s user', 'ref advertisement (git)', 'tree (recursive)', 'push (git)']);
    expect(seen['new top-level upload']).toEqual(['create repository', 'the token\'s user', 'ref advertisement (git)', 'push (git)']);
    // 120 files and a new repository cost one content-creating REST request (the repository itself)
    expect(emu.state.contentCreations).toHaveLength(1);
    // git requests carry the token as GitHub documents it: Basic x-access-token:<token>
    expect(new Set(emu.state.gitAuthorizations)).toEqual(new Set([`Basic ${Buffer.from(`x-access-token:${TOKEN}`).toString('base64')}`]));
  });

  it('never sends the token to a git host other than GitHub\'s own', async () => {
    const elsewhere: string[] = [];
    const other = http.createServer((req, res) => {
      elsewhere.push(`${req.method} ${req.url} ${req.headers.authorization ?? ''}`);
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    emu.state.cloneOrigin = `http://127.0.0.2:${(other.address() as { port: number }).port}`;
    const repo = emu.state.addRepo({ id: 3, login: 'carol' }, 'moved', { 'a.txt': 'a' });
    await expect(target.write(ctx(), `r${repo.id}`, entriesFrom({ 'b.txt': 'b' }), writeOptions())).rejects.toMatchObject({ status: 502, message: expect.stringMatching(/sends the token only to/) });
    expect(elsewhere).toEqual([]);
    await new Promise((resolve) => other.close(resolve));
  });
});
