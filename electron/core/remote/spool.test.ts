import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { fastPathOn } from '../fast-paths.js';
import { withReadWhole } from '../jobs/whole-entry.js';
import type { Entry } from '../target.js';
import { sizeAndMd5 } from './spool.js';

const bytes = Buffer.from('the bytes of a small file\n'.repeat(40));
const md5 = createHash('md5').update(bytes).digest('hex');
const read = async (stream: Readable) => Buffer.concat(await stream.toArray());

function entry(opened: { count: number }): Entry {
  return {
    path: 'a.txt',
    kind: 'file',
    size: bytes.length,
    mtime: null,
    hashes: {},
    open: async () => {
      opened.count++;
      return Readable.from([bytes]);
    },
  };
}

describe('sizeAndMd5', () => {
  it("takes a small file's MD5 from its bytes read whole, without a spooled copy (whole-small-files)", async () => {
    const opened = { count: 0 };
    const wholeReads: string[][] = [];
    const file = withReadWhole(entry(opened), async (algorithms) => {
      wholeReads.push([...algorithms]);
      return { bytes, hashes: { md5: createHash('md5').update(bytes).digest('hex').toUpperCase() } };
    });
    const result = await sizeAndMd5(file);
    expect(result.size).toBe(bytes.length);
    expect(result.md5).toBe(md5);
    if (fastPathOn('whole-small-files')) {
      expect(wholeReads).toEqual([['md5']]);
      // a spooled copy is made by reading open()'s stream
      expect(opened.count).toBe(0);
    } else {
      expect(wholeReads).toEqual([]);
      expect(opened.count).toBe(1);
    }
    // the bytes to send, as often as a retried request asks for them
    expect(await read(await result.open())).toEqual(bytes);
    expect(await read(await result.open())).toEqual(bytes);
    await result.dispose();
  });

  it('spools a file its source offers only as a stream', async () => {
    const opened = { count: 0 };
    const result = await sizeAndMd5(entry(opened));
    expect([result.size, result.md5, opened.count]).toEqual([bytes.length, md5, 1]);
    expect(await read(await result.open())).toEqual(bytes);
    await result.dispose();
  });
});
