import { describe, expect, it } from 'vitest';
import { foldName, isAscii } from './name-fold.js';

describe('foldName: one spelling for names a case- or normalisation-insensitive disk takes as one', () => {
  it('folds case, and composes decomposed Unicode, as NFC then lower case', () => {
    expect(foldName('README.md')).toBe('readme.md');
    expect(foldName('Cafe\u0301/Notes.TXT')).toBe('caf\u00e9/notes.txt');
    expect(foldName('CAF\u00c9')).toBe(foldName('cafe\u0301'));
    expect(foldName('Ǆ')).toBe('ǆ');
  });

  it('gives what the plain rule gives, ASCII or not (the ASCII path skips only the normaliser)', () => {
    const names = ['', 'a', 'Data/Site-01/TABLE-00001.csv', '\u007f~!@#', 'Å', 'A\u030a', 'ﬁle', 'İstanbul', '日本語.txt', 'x\u0000y'];
    for (const name of names) expect(foldName(name)).toBe(name.normalize('NFC').toLowerCase());
  });

  it('isAscii: true only when every character is below 0x80', () => {
    expect(isAscii('')).toBe(true);
    expect(isAscii('plain/path-01.csv\u007f')).toBe(true);
    expect(isAscii('caf\u00e9')).toBe(false);
    expect(isAscii('\u0080')).toBe(false);
    expect(isAscii('\ud83d\ude00')).toBe(false);
  });
});
