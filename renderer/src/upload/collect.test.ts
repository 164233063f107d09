import { describe, expect, it } from 'vitest';
import { describeFiles, HASHED_FILE_BYTES, hasSubfolders, planUploads, topLevelNames, type Picked } from './collect.js';

const f = (path: string, body = 'x') => ({ path, file: new File([body], path.split('/').pop()!) });

describe('upload plans', () => {
  const picked: Picked = {
    files: [f('a.txt'), f('data/one.csv'), f('data/sub/two.csv'), f('more/x.bin')],
    emptyFolders: ['empty', 'data/nothing'],
  };

  it('sends everything as one job into a container', () => {
    const plans = planUploads(picked, false, 'Loose');
    expect(plans).toHaveLength(1);
    expect(plans[0]!.folder).toBeNull();
    expect(plans[0]!.files.map((p) => p.path)).toEqual(['a.txt', 'data/one.csv', 'data/sub/two.csv', 'more/x.bin']);
  });

  it('makes one job per top folder at a top level, loose files wrapped in a named folder', () => {
    const plans = planUploads(picked, true, 'Loose');
    expect(plans.map((p) => p.folder)).toEqual(['data', 'more', 'empty', 'Loose']);
    expect(plans.find((p) => p.folder === 'data')!.emptyFolders).toEqual(['data/nothing']);
    expect(plans.find((p) => p.folder === 'Loose')!.files.map((p) => p.path)).toEqual(['Loose/a.txt']);
    expect(topLevelNames(picked).sort()).toEqual(['a.txt', 'data', 'empty', 'more']);
  });
});

describe('what an upload tells before it is zipped', () => {
  it('has subfolders: into a folder any folder counts; at the top level only one inside a top folder', () => {
    const flat: Picked = { files: [f('a.txt'), f('Top/b.txt')], emptyFolders: [] };
    expect(hasSubfolders(flat, false)).toBe(true);
    expect(hasSubfolders(flat, true)).toBe(false);
    expect(hasSubfolders({ files: [f('Top/sub/c.txt')], emptyFolders: [] }, true)).toBe(true);
    expect(hasSubfolders({ files: [f('a.txt')], emptyFolders: ['Top/empty'] }, true)).toBe(true);
    expect(hasSubfolders({ files: [f('a.txt')], emptyFolders: [] }, false)).toBe(false);
  });

  it('describes each file by its path in the ZIP, its size, its modification time and (a small one) its SHA-256', async () => {
    // jsdom's File cannot be read; the browser's can, as this one
    const file = { size: 5, lastModified: Date.parse('2030-01-01T00:00:00Z'), arrayBuffer: async () => new TextEncoder().encode('12345').buffer } as unknown as File;
    const sha256 = '5994471abb01112afcc18159f6cc74b4f511b99806da59b3caf5a9c173cacfc5';
    expect(await describeFiles([{ path: 'Top/b.txt', file }])).toEqual([{ path: 'Top/b.txt', size: 5, date_modified: '2030-01-01T00:00:00.000Z', hashes: { sha256 } }]);
    // a large one is not read: only what a File tells without reading it
    const large = { size: HASHED_FILE_BYTES + 1, lastModified: 0, arrayBuffer: () => Promise.reject(new Error('read')) } as unknown as File;
    expect((await describeFiles([{ path: 'big.bin', file: large }]))[0]!.hashes).toBeUndefined();
  });
});
