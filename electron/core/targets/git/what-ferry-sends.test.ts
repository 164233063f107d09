import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apacheGitUnavailableReason, startApacheGit, type ApacheGit } from '../../../../test/git/apache-git.js';
import { collect, drain, entriesFrom, writeOptions } from '../../../../test/target-suite/test-entries.js';
import type { TargetContext } from '../../target.js';
import { GitTarget } from './git-target.js';
import { gitId } from './ids.js';

/**
 * "What Ferry sends" to a plain git host (a real git http-backend): every request of a listing,
 * a download, an upload into a container and a new top-level upload must be a row of
 * docs/targets/git.md's evidence table (gitprotocol-http), the counts stay the same however
 * many files move, and the credentials go to the repository's own origin only: a redirect
 * elsewhere is not followed.
 */
const EVIDENCE: { row: string; line: RegExp }[] = [
  { row: 'ref advertisement (upload-pack)', line: /^GET \/git\/[^/]+\.git\/info\/refs\?service=git-upload-pack 200$/ },
  { row: 'fetch (upload-pack)', line: /^POST \/git\/[^/]+\.git\/git-upload-pack 200$/ },
  { row: 'ref advertisement (receive-pack)', line: /^GET \/git\/[^/]+\.git\/info\/refs\?service=git-receive-pack 200$/ },
  { row: 'push (receive-pack)', line: /^POST \/git\/[^/]+\.git\/git-receive-pack 200$/ },
];

const missing = apacheGitUnavailableReason();
if (missing) console.warn(`[git what-ferry-sends] not run: ${missing}`);

describe.skipIf(missing !== null)('what Ferry sends to a git host', () => {
  let server: ApacheGit;
  let target: GitTarget;
  let url: string;
  const ctx = (repo = url): TargetContext => ({ token: JSON.stringify({ url: repo, username: server.username, password: server.password }), signal: new AbortController().signal });

  beforeAll(async () => {
    server = await startApacheGit();
    target = new GitTarget();
    url = await server.createRepo('sends', { 'data/a.csv': '1,2\n', 'README.md': 'hi' });
  });
  afterAll(async () => {
    await target?.close();
    await server?.stop();
  });

  const rows = (lines: string[]) =>
    lines.map((line) => {
      const row = EVIDENCE.find((e) => e.line.test(line));
      expect(row, `${line} is a row of docs/targets/git.md`).toBeDefined();
      return row!.row;
    });

  it('a listing, a download, an upload into a container and a new top-level upload', async () => {
    const files: Record<string, string | null> = {};
    for (let i = 0; i < 500; i++) files[`batch/f${i}.txt`] = `file ${i}`;
    await server.takeRequests();
    await collect(target.list(ctx()));
    expect(rows(await server.takeRequests())).toEqual(['ref advertisement (upload-pack)', 'fetch (upload-pack)']);
    await drain((await target.read(ctx(), gitId('data'))).entries);
    expect(rows(await server.takeRequests())).toEqual(['ref advertisement (upload-pack)', 'fetch (upload-pack)']);
    await target.write(ctx(), gitId('data'), entriesFrom(files), writeOptions());
    expect(rows(await server.takeRequests())).toEqual(['ref advertisement (upload-pack)', 'fetch (upload-pack)', 'ref advertisement (receive-pack)', 'push (receive-pack)']);
    await target.write(ctx(), null, entriesFrom({ 'Fresh/': null, 'Fresh/x.txt': 'x' }), writeOptions());
    expect(rows(await server.takeRequests())).toEqual(['ref advertisement (upload-pack)', 'fetch (upload-pack)', 'ref advertisement (receive-pack)', 'push (receive-pack)']);
  });

  it('does not follow a redirect to another host with the credentials', async () => {
    const elsewhere: string[] = [];
    const other = http.createServer((req, res) => {
      elsewhere.push(`${req.method} ${req.url} ${req.headers.authorization ?? ''}`);
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const otherPort = (other.address() as { port: number }).port;
    const mover = http.createServer((req, res) => {
      res.writeHead(301, { location: `http://127.0.0.1:${otherPort}${req.url}` }).end();
    });
    await new Promise<void>((resolve) => mover.listen(0, '127.0.0.1', resolve));
    const moved = `http://127.0.0.1:${(mover.address() as { port: number }).port}/old/repo.git`;
    await expect(collect(target.list(ctx(moved)))).rejects.toMatchObject({ message: expect.stringMatching(/has moved/) });
    await expect(target.write(ctx(moved), gitId('data'), entriesFrom({ 'b.txt': 'b' }), writeOptions())).rejects.toMatchObject({ message: expect.stringMatching(/has moved/) });
    expect(elsewhere).toEqual([]);
    await Promise.all([new Promise((r) => other.close(r)), new Promise((r) => mover.close(r))]);
  });
});
