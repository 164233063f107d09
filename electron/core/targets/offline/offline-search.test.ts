import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../limits.js';
import type { ResourceNode, TargetContext } from '../../target.js';
import { rawZip } from '../../zip/testing/raw-zip.js';
import { OfflineTarget } from './offline-target.js';

const ctx = (): TargetContext => ({ token: 'checked-by-the-http-layer', signal: new AbortController().signal });

describe('offline target: search', () => {
  let scratch: string;
  let target: OfflineTarget;

  beforeAll(async () => {
    scratch = await mkdtemp(path.join(os.tmpdir(), 'ferry-offline-search-'));
    const library = path.join(scratch, 'library');
    await mkdir(library);
    await writeFile(path.join(library, 'reef-survey.zip'), rawZip([{ name: 'top/a.txt' }]));
    await writeFile(path.join(library, 'soil.zip'), rawZip([{ name: 'soil/Survey Sheets/b.csv' }, { name: 'soil/raw/SURVEY-1.dat' }, { name: 'soil/raw/other.dat' }]));
    target = new OfflineTarget({ libraryDirs: [library], stateDir: path.join(scratch, 'state'), limits: DEFAULT_LIMITS });
  });
  afterAll(() => rm(scratch, { recursive: true, force: true }));

  it('finds archives and the names inside them, with the ids the listing gives them', async () => {
    const page = await target.search(ctx(), { text: 'survey', page: 1 });
    expect(page).toMatchObject({ method: 'names', next: null });
    expect(page.nodes.map((n) => n.title).sort()).toEqual(['SURVEY-1.dat', 'Survey Sheets', 'reef-survey'].sort());
    const listed: ResourceNode[] = [];
    for await (const node of target.list(ctx())) listed.push(node);
    for (const node of page.nodes) expect(listed).toContainEqual(node);
  });
});
