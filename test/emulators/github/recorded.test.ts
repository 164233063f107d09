import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGithubEmulator, type GithubEmulator } from './server.js';
import { shapeDiff } from './shape.js';

const recorded = (name: string) => JSON.parse(readFileSync(new URL(`./recorded/${name}`, import.meta.url), 'utf8')) as unknown;

let emu: GithubEmulator;
const call = async (method: string, path: string, body?: unknown) => {
  const response = await fetch(`${emu.url}${path}`, {
    method,
    headers: { authorization: 'token t0', 'user-agent': 'shape-test', accept: 'application/vnd.github+json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, unknown> };
};

beforeAll(async () => {
  emu = await startGithubEmulator();
  emu.state.tokens.set('t0', { id: 1, login: 'fixture-user' });
  emu.state.addRepo({ id: 1, login: 'fixture-user' }, 'create-file');
  emu.state.addRepo({ id: 1, login: 'fixture-user' }, 'tree', { '.gitignore': 'x', 'github/Github.py': 'y' });
});
afterAll(() => emu.close());

describe('GitHub emulator vs recorded responses', () => {
  it('contents PUT on an empty repo: 201, same shape, the real git blob id', async () => {
    const r = await call('PUT', '/repos/fixture-user/create-file/contents/test.txt', { message: 'create test.txt', content: 'VGVzdCBjb250ZW50' });
    expect(r.status).toBe(201);
    expect(shapeDiff(recorded('create-file.put-contents.201.json'), r.body)).toEqual([]);
    expect((r.body.content as { sha: string }).sha).toBe('3f3f005b29247e51a4f4d6b8ce07b67646cd6074');
    expect(r.headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/);
  });

  it('git ref and recursive tree', async () => {
    const ref = await call('GET', '/repos/fixture-user/tree/git/ref/heads/main');
    expect(shapeDiff(recorded('git-refs.get-ref.200.json'), ref.body)).toEqual([]);
    const tree = await call('GET', '/repos/fixture-user/tree/git/trees/main?recursive=1');
    expect(shapeDiff(recorded('git-tree.recursive.200.json'), tree.body)).toEqual([]);
    expect(tree.body.truncated).toBe(false);
  });

  it('errors: 401 Bad credentials, 404 Not Found, 409 on the empty repository', async () => {
    const bad = await fetch(`${emu.url}/user/repos`, { headers: { authorization: 'token nope', 'user-agent': 'x' } });
    expect(bad.status).toBe(401);
    expect(await bad.json()).toMatchObject({ message: 'Bad credentials', documentation_url: expect.any(String) });
    expect((await call('GET', '/repos/someone/else')).status).toBe(404);
    emu.state.addRepo({ id: 1, login: 'fixture-user' }, 'blank');
    const empty = await call('POST', '/repos/fixture-user/blank/git/blobs', { content: 'x', encoding: 'utf-8' });
    expect(empty).toMatchObject({ status: 409, body: { message: 'Git Repository is empty.' } });
  });

  it("topics and a description as GitHub's docs and answers say: lower case kept, a bad topic, 21 topics or a description with a line break or over 350 characters refused with 422", async () => {
    emu.state.addRepo({ id: 1, login: 'fixture-user' }, 'topics');
    const put = await call('PUT', '/repos/fixture-user/topics/topics', { names: ['Tides', 'sea-level'] });
    expect(put).toMatchObject({ status: 200, body: { names: ['tides', 'sea-level'] } });
    expect((await call('GET', '/repos/fixture-user/topics')).body.topics).toEqual(['tides', 'sea-level']);
    for (const names of [['sea level'], ['-tides'], ['a'.repeat(51)], ['meeresspiegel_nordsee']]) {
      const refused = await call('PUT', '/repos/fixture-user/topics/topics', { names });
      expect(refused).toMatchObject({ status: 422, body: { message: 'Validation Failed', errors: [expect.stringMatching(/^Topics must start with a lowercase letter or number, consist of 50 characters or less/)] } });
    }
    const tooMany = await call('PUT', '/repos/fixture-user/topics/topics', { names: Array.from({ length: 21 }, (_, i) => `t${i}`) });
    expect(tooMany).toMatchObject({ status: 422, body: { errors: ['A repository cannot have more than 20 topics.'] } });
    expect((await call('GET', '/repos/fixture-user/topics/topics')).body.names).toEqual(['tides', 'sea-level']);

    const twoLines = await call('POST', '/user/repos', { name: 'described', description: 'one\ntwo' });
    expect(twoLines).toMatchObject({ status: 422, body: { message: 'Repository creation failed.', errors: [{ field: 'description', message: 'description control characters are not allowed' }] } });
    const long = await call('POST', '/user/repos', { name: 'described', description: 'x'.repeat(351) });
    expect(long).toMatchObject({ status: 422, body: { errors: [{ field: 'description', message: 'description cannot be more than 350 characters' }] } });
    const made = await call('POST', '/user/repos', { name: 'described', description: 'x'.repeat(350), homepage: 'https://doi.org/10.5281/zenodo.1' });
    expect(made).toMatchObject({ status: 201, body: { homepage: 'https://doi.org/10.5281/zenodo.1' } });
  });
});
