import { describe, expect, it } from 'vitest';
import { judge, readPlan, sharedAlgorithms, type PathFacts } from './check-compare.js';

const file = (size: number | null, hashes: Record<string, string> = {}): PathFacts => ({ kind: 'file', size, hashes });
const folder: PathFacts = { kind: 'folder', size: null, hashes: {} };
const LOCAL_AND_WEBDAV = sharedAlgorithms(['md5', 'sha256'], ['md5', 'sha1']);

describe('sharedAlgorithms', () => {
  it('keeps what both targets report, strongest first, unknown names last by name', () => {
    expect(sharedAlgorithms(['md5', 'sha256'], ['sha256', 'md5'])).toEqual(['sha256', 'md5']);
    expect(LOCAL_AND_WEBDAV).toEqual(['md5']);
    expect(sharedAlgorithms(['git-sha1'], ['md5', 'sha256'])).toEqual([]);
    expect(sharedAlgorithms(['quickxor', 'git-sha1', 'md5'], ['md5', 'git-sha1', 'quickxor'])).toEqual(['md5', 'git-sha1', 'quickxor']);
  });
});

describe('judge: one path both sides have', () => {
  it.each([
    ['same hash', file(3, { md5: 'aa' }), file(3, { md5: 'AA' }), { verdict: 'matched', algorithm: 'md5' }],
    [
      'other hash, same size',
      file(3, { md5: 'aa', sha256: 'cc' }),
      file(3, { md5: 'bb', sha1: 'dd' }),
      { verdict: 'different', difference: { path: 'D/a', by: 'hash', algorithm: 'md5', source: 'aa', destination: 'bb' } },
    ],
    ['sizes differ: different, whatever the hashes say', file(3, { md5: 'aa' }), file(4, { md5: 'aa' }), { verdict: 'different', difference: { path: 'D/a', by: 'size', source: 3, destination: 4 } }],
    ['a hash only the source gives: sizes only', file(3, { sha256: 'cc' }), file(3, {}), { verdict: 'no_common_hash', sizes: 'equal' }],
    ['no size on one side, no common hash', file(3), file(null), { verdict: 'no_common_hash', sizes: 'unknown' }],
    ['no size on one side, a common hash', file(null, { md5: 'aa' }), file(3, { md5: 'aa' }), { verdict: 'matched', algorithm: 'md5' }],
    ['a file here, a folder there', file(3), folder, { verdict: 'different', difference: { path: 'D/a', by: 'kind', source: 'file', destination: 'folder' } }],
    ['two folders', folder, folder, { verdict: 'folders' }],
  ] as const)('%s', (_name, source, destination, expected) => {
    expect(judge('D/a', source, destination, LOCAL_AND_WEBDAV)).toEqual(expected);
  });

  it('uses the strongest algorithm both give, and no other', () => {
    const algorithms = sharedAlgorithms(['md5', 'sha256'], ['md5', 'sha256']);
    expect(judge('a', file(1, { md5: 'aa', sha256: 'same' }), file(1, { md5: 'bb', sha256: 'same' }), algorithms)).toEqual({ verdict: 'matched', algorithm: 'sha256' });
    // a hash the targets do not share is never compared, even when both entries carry one
    expect(judge('a', file(1, { sha1: 'x' }), file(1, { sha1: 'y' }), ['md5'])).toEqual({ verdict: 'no_common_hash', sizes: 'equal' });
  });
});

describe('readPlan: which bytes read_bytes reads', () => {
  it.each([
    ['the destination gives md5: read the source only', file(1, {}), file(1, { md5: 'aa' }), { algorithm: 'md5', read: ['source'] }],
    ['the source gives sha256: read the destination only', file(1, { sha256: 'aa' }), file(1, {}), { algorithm: 'sha256', read: ['destination'] }],
    ['neither gives one Ferry computes: both, by sha256', file(1, { 'git-sha1': 'aa' }), file(1, {}), { algorithm: 'sha256', read: ['source', 'destination'] }],
  ] as const)('%s', (_name, source, destination, expected) => {
    expect(readPlan(source, destination)).toEqual(expected);
  });
});
