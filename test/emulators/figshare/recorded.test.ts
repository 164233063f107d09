import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { missingFrom } from '../zenodo/shape.js';
import { startFigshareEmulator, type FigshareEmulator } from './emulator.js';

const recorded = (name: string) => (JSON.parse(readFileSync(new URL(`./recorded/${name}`, import.meta.url), 'utf8')) as { body: unknown }).body;

/** The emulator's bodies carry every key (same JSON type) of the real figshare bodies in ./recorded/. */
describe('figshare emulator against recorded responses', () => {
  let emulator: FigshareEmulator;
  const auth = { authorization: 'token figshare-token' };
  beforeAll(async () => {
    emulator = await startFigshareEmulator({ partSize: 4 });
  });
  afterAll(() => emulator.close());

  it('article, project article list, and the upload protocol bodies have the recorded shapes', async () => {
    const project = emulator.state.addProject(1, 'Project');
    const article = emulator.state.addArticle(1, 'file_article', project.id, { file: 'content' });
    const get = async (url: string) => (await fetch(url.startsWith('http') ? url : `${emulator.url}${url}`, { headers: auth })).json();

    expect(missingFrom(await get(`/account/articles/${article.id}`), recorded('article.json'))).toEqual([]);
    const list = (await get(`/account/projects/${project.id}/articles`)) as unknown[];
    expect(missingFrom(list[0], recorded('project-article-summary.json'))).toEqual([]);

    const initiate = await fetch(`${emulator.url}/account/articles/${article.id}/files`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'barricade.gif', size: 6, md5: '13365d367683301ee26d9d76d25c518b' }) });
    expect(initiate.status).toBe(201);
    const { location } = (await initiate.json()) as { location: string };
    expect(missingFrom({ location }, recorded('initiate-upload.json'))).toEqual([]);
    const file = (await get(location)) as { upload_url: string; computed_md5: string; status: string };
    expect(missingFrom(file, recorded('file-created.json'))).toEqual([]);
    expect(file).toMatchObject({ status: 'created', computed_md5: '' });
    const session = await (await fetch(file.upload_url)).json();
    expect(missingFrom(session, recorded('upload-session.json'))).toEqual([]);
    expect((session as { parts: unknown[] }).parts).toHaveLength(2); // 6 bytes in parts of 4
  });

  it('bad token → 403 {message, code}, as figshare does in practice', async () => {
    const response = await fetch(`${emulator.url}/account/articles`, { headers: { authorization: 'token nope' } });
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ message: expect.any(String), code: expect.any(String) });
  });

  it('mixing page and offset paging is 422; offset past 1000 is 422', async () => {
    expect((await fetch(`${emulator.url}/account/articles?page=1&limit=10`, { headers: auth })).status).toBe(422);
    expect((await fetch(`${emulator.url}/account/articles?offset=1001&limit=10`, { headers: auth })).status).toBe(422);
  });
});
