import { describe, expect, it } from 'vitest';
import { planUploads, topLevelNames, type Picked } from './collect.js';

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
