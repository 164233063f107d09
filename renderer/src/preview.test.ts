import { describe, expect, it } from 'vitest';
import { imageUrlOf, previewKindOf, tableOf, TABLE_PREVIEW_ROWS, textOf } from './preview.js';

const bytes = (text: string) => new TextEncoder().encode(text);

describe('file preview', () => {
  it('is decided by the name: text, tables, the five image types, and nothing else', () => {
    expect(previewKindOf('notes.TXT')).toEqual({ kind: 'text' });
    expect(previewKindOf('README')).toEqual({ kind: 'text' });
    expect(previewKindOf('data.csv')).toEqual({ kind: 'table', delimiter: ',' });
    expect(previewKindOf('data.tsv')).toEqual({ kind: 'table', delimiter: '\t' });
    expect(previewKindOf('figure.svg')).toEqual({ kind: 'image', mime: 'image/svg+xml' });
    expect(previewKindOf('photo.JPG')).toEqual({ kind: 'image', mime: 'image/jpeg' });
    for (const name of ['archive.zip', 'scan.tiff', 'model.h5', 'noextension', '.csv']) expect(previewKindOf(name), name).toBeNull();
  });

  it('shows text as it is, refuses binary, and leaves out a character the cut split', () => {
    expect(textOf(bytes('<b>bold</b>'), false)).toBe('<b>bold</b>');
    expect(textOf(new Uint8Array([0x50, 0x4b, 0x00, 0x01]), false)).toBeNull();
    const cut = bytes('café').subarray(0, 4); // "caf" and the first byte of "é"
    expect(textOf(cut, true)).toBe('caf');
    expect(textOf(cut, false)).toBe('caf\ufffd');
  });

  it('parses quoted CSV fields and tab-separated rows', () => {
    expect(tableOf('site,note\nA,"calm, clear"\n', ',', false)).toEqual({ rows: [['site', 'note'], ['A', 'calm, clear']], more: false });
    expect(tableOf('a\tb\n1\t2\n', '\t', false).rows).toEqual([['a', 'b'], ['1', '2']]);
  });

  it('drops a row the byte limit cut, and keeps to the first rows', () => {
    expect(tableOf('a,b\n1,2\n3,4', ',', true)).toEqual({ rows: [['a', 'b'], ['1', '2']], more: true });
    const long = Array.from({ length: 500 }, (_, i) => `${i},x`).join('\n');
    const table = tableOf(long, ',', false);
    expect(table.rows).toHaveLength(TABLE_PREVIEW_ROWS);
    expect(table.rows.at(-1)).toEqual([String(TABLE_PREVIEW_ROWS - 1), 'x']);
    expect(table.more).toBe(true);
  });

  it('makes an image URL of the chosen type from any bytes', () => {
    expect(imageUrlOf(bytes('<svg/>'), 'image/svg+xml')).toBe(`data:image/svg+xml;base64,${btoa('<svg/>')}`);
    const large = new Uint8Array(200_000).fill(255);
    expect(imageUrlOf(large, 'image/png').length).toBe('data:image/png;base64,'.length + Math.ceil(200_000 / 3) * 4);
  });
});
