import { describe, expect, it } from 'vitest';
import { FerryError } from '../../errors.js';
import { childIdEncoder, decodeLocalId, encodeLocalId } from './ids.js';

const awkward = [
  'data.json',
  'with space/and more.txt',
  'café', // NFC
  'cafe\u0301', // NFD
  '100% sure',
  'hash#tag',
  'what?.txt',
  '日本語/ファイル.csv',
  '..hidden-but-fine',
  'a/b/c/d/e.zip',
];

describe('local ids', () => {
  it.each(awkward)('round-trips %s and stays path-safe without dots', (relativePath) => {
    const id = encodeLocalId(relativePath);
    expect(id).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(id).not.toContain('.');
    expect(decodeLocalId(id)).toBe(relativePath);
  });

  it('keeps NFC and NFD spellings distinct', () => {
    expect(encodeLocalId('café')).not.toBe(encodeLocalId('cafe\u0301'));
  });

  it.each([
    ['parent', encodeLocalId('..')],
    ['parent inside', encodeLocalId('a/../../etc/passwd')],
    ['absolute', encodeLocalId('/etc/passwd')],
    ['dot', encodeLocalId('a/./b')],
    ['empty segment', encodeLocalId('a//b')],
    ['NUL', encodeLocalId('a\0b')],
    ['backslash', encodeLocalId('..\\..\\x')],
    ['empty', 'loc_'],
    ['no prefix', Buffer.from('a.txt').toString('base64url')],
    ['non-canonical base64', 'loc_YWJ'],
    ['invalid characters', 'loc_YS50eHQ='],
    ['invalid utf-8', `loc_${Buffer.from([0xff, 0xfe]).toString('base64url')}`],
  ])('rejects %s with a 404', (_label, id) => {
    expect(() => decodeLocalId(id)).toThrow(FerryError);
    try {
      decodeLocalId(id);
    } catch (error) {
      expect((error as FerryError).status).toBe(404);
    }
  });
});

describe('childIdEncoder', () => {
  // folder byte lengths 0..5 cover every carry (0, 1 and 2 bytes left over); names cover
  // ASCII of every length mod 3, non-ASCII (the Buffer path) and an empty-ish one-byte name
  const folders = ['', 'a', 'ab', 'abc', 'abcd', 'é', '日本', 'x/é', 'Many/d12'];
  const names = ['f', 'fo', 'foo', 'f1234.txt', 'café', 'cafe\u0301', '日本語.csv', '~`!@#$%^&()_+={}[];\'', '\u007f\u0001'];
  it.each(folders)('gives encodeLocalId(folder + name) for every name under %j', (folder) => {
    const encode = childIdEncoder(folder);
    for (const name of names) {
      expect(encode(name)).toBe(encodeLocalId(folder === '' ? name : `${folder}/${name}`));
      expect(decodeLocalId(encode(name))).toBe(folder === '' ? name : `${folder}/${name}`);
    }
  });
});
