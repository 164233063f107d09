import http from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startGitlabEmulator, type GitlabEmulator } from '../../../../test/emulators/gitlab/server.js';
import { collect, drain, entriesFrom, writeOptions } from '../../../../test/target-suite/test-entries.js';
import { makeConfig } from '../../config.js';
import { MemorySecretStore } from '../../keychain/memory.js';
import type { Target, TargetContext } from '../../target.js';
import { createGitlabTarget } from './index.js';

/**
 * "What Ferry sends" to GitLab: every request of a listing, a download, an upload into a
 * container and a new top-level upload must be a row of docs/targets/gitlab.md's evidence
 * table, no REST request may carry file bytes (GitLab.com ends a REST request after 60 s), and
 * the token goes to the instance's own origin only.
 */
const EVIDENCE: { row: string; method: string; path: RegExp }[] = [
  { row: 'list projects', method: 'GET', path: /^\/api\/v4\/projects$/ },
  { row: 'project by id', method: 'GET', path: /^\/api\/v4\/projects\/\d+$/ },
  { row: 'repository tree', method: 'GET', path: /^\/api\/v4\/projects\/\d+\/repository\/tree$/ },
  { row: 'file metadata (HEAD)', method: 'HEAD', path: /^\/api\/v4\/projects\/\d+\/repository\/files\/[^/]+$/ },
  { row: 'blob (raw)', method: 'GET', path: /^\/api\/v4\/projects\/\d+\/repository\/blobs\/[0-9a-f]{40}\/raw$/ },
  { row: 'last commit of a path', method: 'GET', path: /^\/api\/v4\/projects\/\d+\/repository\/commits$/ },
  { row: 'the token\'s user', method: 'GET', path: /^\/api\/v4\/user$/ },
  { row: 'create project', method: 'POST', path: /^\/api\/v4\/projects$/ },
  { row: 'ref advertisement (git)', method: 'GET', path: /^\/[^/]+\/[^/]+\.git\/info\/refs$/ },
  { row: 'push (git)', method: 'POST', path: /^\/[^/]+\/[^/]+\.git\/git-receive-pack$/ },
  { row: 'shallow fetch (git)', method: 'POST', path: /^\/[^/]+\/[^/]+\.git\/git-upload-pack$/ },
];

const TOKEN = 'glpat-what-ferry-sends';
let emu: GitlabEmulator;
let target: Target;
const ctx = (): TargetContext => ({ token: TOKEN, signal: new AbortController().signal });
const carol = { id: 9, username: 'carol', name: 'Carol' };

beforeEach(async () => {
  emu = await startGitlabEmulator();
  emu.state.tokens.set(TOKEN, carol);
  target = createGitlabTarget(makeConfig({ remotes: { ...makeConfig().remotes, gitlabUrl: emu.url } }), new MemorySecretStore(), { maxRateWaitMs: 2000, ratePerSecond: 500 });
});
afterEach(async () => {
  await emu.close();
});

function rowsOf(requests: string[]): string[] {
  return requests.map((request) => {
    const [method, path] = request.split(' ') as [string, string];
    const row = EVIDENCE.find((e) => e.method === method && e.path.test(path));
    expect(row, `${request} is a row of docs/targets/gitlab.md`).toBeDefined();
    return row!.row;
  });
}

describe('what Ferry sends to GitLab', () => {
  it('a listing, a download, an upload into a container and a new top-level upload: only documented requests, no file bytes in the REST API', async () => {
    const project = emu.state.addProject(carol, 'study', { 'data/a.csv': '1,2\n', 'README.md': 'hi' });
    const files: Record<string, string | Buffer | null> = {};
    for (let i = 0; i < 50; i++) files[`batch/f${i}.bin`] = Buffer.alloc(20_000, i);

    const steps: Record<string, () => Promise<unknown>> = {
      listing: () => collect(target.list(ctx())),
      download: async () => drain((await target.read(ctx(), `p${project.id}`)).entries),
      'upload into a container': () => target.write(ctx(), `p${project.id}`, entriesFrom(files), writeOptions()),
      'new top-level upload': () => target.write(ctx(), null, entriesFrom({ 'Fresh/': null, 'Fresh/x.txt': 'x' }), writeOptions()),
    };
    const seen: Record<string, string[]> = {};
    for (const [name, step] of Object.entries(steps)) {
      const before = emu.state.requests.length;
      await step();
      seen[name] = [...new Set(rowsOf(emu.state.requests.slice(before)))];
    }
    // a whole project: one REST lookup and one shallow fetch, however many files
    expect(seen.download).toEqual(['project by id', 'ref advertisement (git)', 'shallow fetch (git)']);
    expect(seen['upload into a container']).toEqual(['project by id', 'the token\'s user', 'ref advertisement (git)', 'repository tree', 'push (git)']);
    expect(seen['new top-level upload']).toEqual(['create project', 'the token\'s user', 'ref advertisement (git)', 'push (git)']);
    expect(Math.max(...emu.state.apiBodies.map((b) => b.bytes))).toBeLessThan(4096);
    // git requests carry the token as GitLab documents it: Basic oauth2:<token>
    expect(new Set(emu.state.gitAuthorizations)).toEqual(new Set([`Basic ${Buffer.from(`oauth2:${TOKEN}`).toString('base64')}`]));
  });

  it('never sends the token to a git host other than the instance', async () => {
    const elsewhere: string[] = [];
    const other = http.createServer((req, res) => {
      elsewhere.push(`${req.method} ${req.url}`);
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    emu.state.cloneOrigin = `http://127.0.0.1:${(other.address() as { port: number }).port}`;
    const project = emu.state.addProject(carol, 'moved', { 'a.txt': 'a' });
    await expect(target.write(ctx(), `p${project.id}`, entriesFrom({ 'b.txt': 'b' }), writeOptions())).rejects.toMatchObject({ status: 502, message: expect.stringMatching(/sends the token only to/) });
    expect(elsewhere).toEqual([]);
    await new Promise((resolve) => other.close(resolve));
  });
});
