import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shapeDiff } from '../github/shape.js';
import { startGitlabEmulator, type GitlabEmulator } from './server.js';

const recorded = (name: string) => JSON.parse(readFileSync(new URL(`./recorded/${name}`, import.meta.url), 'utf8')) as unknown;

let emu: GitlabEmulator;
let projectId: number;
const get = async (path: string) => {
  const response = await fetch(`${emu.url}/api/v4/${path}`, { headers: { 'private-token': 'glpat-0' } });
  return { status: response.status, headers: response.headers, body: (await response.json()) as unknown };
};

beforeAll(async () => {
  emu = await startGitlabEmulator();
  emu.state.tokens.set('glpat-0', { id: 1, username: 'example-user', name: 'Example User' });
  projectId = emu.state.addProject({ id: 1, username: 'example-user', name: 'Example User' }, 'wb-gl-testing', { 'files/html/a.html': '<p>', 'files/whitespace': ' ' }).id;
});
afterAll(() => emu.close());

describe('GitLab emulator vs recorded responses', () => {
  it('project, commit and tree shapes', async () => {
    const project = await get(`projects/${projectId}`);
    expect(shapeDiff(recorded('project.200.json'), project.body)).toEqual([]);
    expect(project.headers.get('ratelimit-remaining')).toMatch(/^\d+$/);
    const commits = await get(`projects/${projectId}/repository/commits`);
    expect(shapeDiff(recorded('commit.200.json'), (commits.body as unknown[])[0])).toEqual([]);
    const tree = await get(`projects/${projectId}/repository/tree?path=files`);
    expect(shapeDiff(recorded('tree.200.json'), tree.body)).toEqual([]);
  });

  it('errors: 401 and 404 bodies, 429 "Retry later" with Retry-After', async () => {
    const bad = await fetch(`${emu.url}/api/v4/projects`, { headers: { 'private-token': 'wrong' } });
    expect(bad.status).toBe(401);
    expect(await bad.json()).toEqual({ message: '401 Unauthorized' });
    expect(await get('projects/424242')).toMatchObject({ status: 404, body: { message: '404 Project Not Found' } });
    emu.state.rateLimit.remaining = 0;
    const limited = await fetch(`${emu.url}/api/v4/projects`, { headers: { 'private-token': 'glpat-0' } });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await limited.text()).toBe('Retry later\n');
    emu.state.rateLimit.remaining = 100;
  });
});
