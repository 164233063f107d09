import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { createDeflate, deflateSync } from 'node:zlib';
import { FerryError } from '../../errors.js';
import type { ObjectType } from './git-objects.js';

/**
 * A packfile (gitformat-pack: "PACK", version 2, object count, each object as a type-and-size
 * header and its zlib-deflated body, then the SHA-1 of everything before) produced as a stream.
 * A file's bytes pass through one chunk at a time, so a pack of any size is never held in
 * memory; the only cost is that every object's size and count are known before it starts.
 * No deltas: every object is whole, which every receive-pack accepts.
 */
export interface PackObject {
  type: ObjectType;
  size: number;
  /** the id the object must have; a blob whose bytes hash otherwise fails the pack */
  oid: string;
  /** the body: bytes in hand, or a fresh stream of them */
  body: Buffer | (() => Promise<Readable>);
  /** names the object in an error message */
  label: string;
}

const TYPE_CODE: Record<ObjectType, number> = { commit: 1, tree: 2, blob: 3 };
/** bodies up to this size are read whole and deflated at once: faster than a stream per small file */
const WHOLE_BODY_BYTES = 1024 * 1024;

export async function* packStream(objects: PackObject[]): AsyncGenerator<Buffer> {
  const trailer = createHash('sha1');
  const emit = (chunk: Buffer) => {
    trailer.update(chunk);
    return chunk;
  };
  const header = Buffer.alloc(12);
  header.write('PACK', 0, 'ascii');
  header.writeUInt32BE(2, 4);
  header.writeUInt32BE(objects.length, 8);
  yield emit(header);
  for (const object of objects) {
    yield emit(objectHeader(object.type, object.size));
    if (Buffer.isBuffer(object.body)) {
      yield emit(deflateSync(object.body));
      continue;
    }
    const check = new BodyCheck(object);
    const source = await object.body();
    if (object.size <= WHOLE_BODY_BYTES) {
      const chunks: Buffer[] = [];
      for await (const chunk of source) chunks.push(check.update(chunk as Buffer));
      check.finish();
      yield emit(deflateSync(Buffer.concat(chunks)));
      continue;
    }
    const deflate = createDeflate();
    const checked = Readable.from(
      (async function* () {
        for await (const chunk of source) yield check.update(chunk as Buffer);
        check.finish();
      })(),
    );
    checked.on('error', (error) => deflate.destroy(error));
    for await (const out of checked.pipe(deflate)) yield emit(out as Buffer);
  }
  yield trailer.digest();
}

/** The pack object header: type in bits 4-6 of the first byte, the size 4 then 7 bits at a time. */
function objectHeader(type: ObjectType, size: number): Buffer {
  const bytes: number[] = [];
  let rest = Math.floor(size / 16);
  let byte = (TYPE_CODE[type] << 4) | (size & 0x0f);
  while (rest > 0) {
    bytes.push(byte | 0x80);
    byte = rest & 0x7f;
    rest = Math.floor(rest / 128);
  }
  bytes.push(byte);
  return Buffer.from(bytes);
}

/**
 * The second read of a file must give the bytes the first read hashed: the commit names their
 * id. If the file changed in between, the pack fails (the host then stores nothing) rather
 * than carrying bytes under another file's id.
 */
class BodyCheck {
  private readonly hash;
  private seen = 0;

  constructor(private readonly object: PackObject) {
    this.hash = createHash('sha1').update(`${object.type} ${object.size}\0`);
  }

  update(chunk: Buffer): Buffer {
    this.seen += chunk.length;
    if (this.seen > this.object.size) this.fail();
    this.hash.update(chunk);
    return chunk;
  }

  finish(): void {
    if (this.seen !== this.object.size || this.hash.digest('hex') !== this.object.oid) this.fail();
  }

  private fail(): never {
    throw new FerryError(409, 'conflict', `"${this.object.label}" changed while Ferry was uploading it; nothing was pushed. Upload again once the file is no longer being written.`);
  }
}
