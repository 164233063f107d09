import { describe, expect, it } from 'vitest';
import { byteStringToBase64url, writeByteStringAsBase64url } from './base64url.js';

describe('base64url of byte strings', () => {
  // every length mod 3, every byte value, and the characters '-' and '_' stand for
  const samples = ['', 'a', 'ab', 'abc', 'abcd', 'many/d5/f12345.txt', '\u00ff\u00fe\u00fd', '>>>???', String.fromCharCode(...Array.from({ length: 256 }, (_, i) => i))];

  it('is what Buffer gives, as a string and written into a buffer', () => {
    for (const sample of samples) {
      const want = Buffer.from(sample, 'latin1').toString('base64url');
      expect(byteStringToBase64url(sample)).toBe(want);
      const out = Buffer.alloc(want.length + 8, 0x2a);
      expect(writeByteStringAsBase64url(sample, out, 3)).toBe(3 + want.length);
      expect(out.toString('latin1', 3, 3 + want.length)).toBe(want);
      expect(out[3 + want.length]).toBe(0x2a);
    }
  });
});
