import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FolderTrash } from './folder-trash.js';
import { DestinationTaken } from './no-replace.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-trash-'));
  await mkdir(path.join(dir, 'ws', 'Data'), { recursive: true });
  await writeFile(path.join(dir, 'ws', 'Data', 'a.txt'), 'alpha');
});
afterEach(() => rm(dir, { recursive: true, force: true }));

describe("Ferry's trash folder", () => {
  it('keeps the item as <id>-<name> beside a record, lists it, and gives it back', async () => {
    const trash = new FolderTrash(path.join(dir, 'trash'), () => new Date('2026-11-24T07:45:12.123Z'));
    const receipt = await trash.put(path.join(dir, 'ws', 'Data', 'a.txt'), { target: 'local', path: 'Data/a.txt', kind: 'file' });
    expect(receipt.kind).toBe('ferry_trash');
    const id = (receipt as { id: string }).id;
    expect(id).toMatch(/^20261124T074512123Z-[0-9a-f]{6}$/);
    expect((await readdir(path.join(dir, 'trash'))).sort()).toEqual([`${id}-a.txt`, `${id}.json`]);
    expect(await readdir(path.join(dir, 'ws', 'Data'))).toEqual([]);
    expect(await trash.list()).toEqual([{ id, origin: { target: 'local', path: 'Data/a.txt', kind: 'file' }, trashedAt: new Date('2026-11-24T07:45:12.123Z') }]);

    await writeFile(path.join(dir, 'ws', 'Data', 'a.txt'), 'new');
    await expect(trash.takeOut(id, path.join(dir, 'ws', 'Data', 'a.txt'))).rejects.toBeInstanceOf(DestinationTaken);
    expect(await readFile(path.join(dir, 'ws', 'Data', 'a.txt'), 'utf8')).toBe('new');
    expect(await trash.list()).toHaveLength(1);

    await trash.takeOut(id, path.join(dir, 'ws', 'Data', 'a (restored).txt'));
    expect(await readFile(path.join(dir, 'ws', 'Data', 'a (restored).txt'), 'utf8')).toBe('alpha');
    expect(await trash.list()).toEqual([]);
    expect(await readdir(path.join(dir, 'trash'))).toEqual([]);
  });

  it('answers 404 for ids it never gave, including ones shaped to climb out', async () => {
    const trash = new FolderTrash(path.join(dir, 'trash'));
    for (const id of ['../ws/Data/a', '20261124T074512123Z-zzzzzz', 'x']) await expect(trash.find(id)).rejects.toMatchObject({ status: 404 });
  });

  it('leaves no record behind when the item cannot be moved', async () => {
    const trash = new FolderTrash(path.join(dir, 'trash'));
    await expect(trash.put(path.join(dir, 'ws', 'missing.txt'), { target: 'local', path: 'missing.txt', kind: 'file' })).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await readdir(path.join(dir, 'trash'))).toEqual([]);
  });
});
