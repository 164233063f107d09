import { createHash } from 'node:crypto';
import { inflateSync } from 'node:zlib';
import type { GitStore } from './git-objects.js';

/**
 * The receiving side of `git push` over smart HTTP, for the GitHub and GitLab emulators: the
 * ref advertisement (gitprotocol-http "Smart Clients": `# service=git-receive-pack`, a flush,
 * then refs with capabilities after a NUL on the first line; an empty repository advertises
 * "capabilities^{}" with the zero id) and the report-status answer to a push
 * (gitprotocol-pack "Pushing Data To a Server": "unpack ok", then "ok <ref>" or
 * "ng <ref> <reason>"). As git's receive-pack does, a ref moves only if it still holds the old
 * id the client sent, only fast-forward, and only after the whole pack was stored; a pack with
 * a delta, a bad object or a bad checksum is refused whole. The capabilities are git 2.39's.
 */
const ZERO = '0000000000000000000000000000000000000000';
const CAPABILITIES = 'report-status report-status-v2 delete-refs side-band-64k quiet atomic ofs-delta object-format=sha1 agent=git/2.39.5';
const TYPES: Record<number, 'commit' | 'tree' | 'blob'> = { 1: 'commit', 2: 'tree', 3: 'blob' };

export interface PushTarget {
  git: GitStore;
  /** refs/heads/<name> → commit id */
  refs: Map<string, string>;
}

export interface PushRecord {
  objects: number;
  blobs: number;
  bytes: number;
}

export function pkt(text: string): string {
  return (text.length + 4).toString(16).padStart(4, '0') + text;
}

export function advertisement(target: PushTarget): Buffer {
  const refs = [...target.refs.entries()];
  const lines = refs.length ? refs.map(([name, oid], i) => pkt(`${oid} ${name}${i === 0 ? `\0${CAPABILITIES}` : ''}\n`)) : [pkt(`${ZERO} capabilities^{}\0${CAPABILITIES}\n`)];
  return Buffer.from(`${pkt('# service=git-receive-pack\n')}0000${lines.join('')}0000`);
}

/** Applies a push request; returns the report-status body and what the pack held. */
export function receivePack(target: PushTarget, body: Buffer): { report: Buffer; record: PushRecord | null; updated: boolean } {
  const commands: { old: string; next: string; ref: string }[] = [];
  let at = 0;
  for (;;) {
    const length = Number.parseInt(body.subarray(at, at + 4).toString(), 16);
    at += 4;
    if (!length) break;
    const line = body.subarray(at, at + length - 4).toString('utf8').split('\0')[0]!.replace(/\n$/, '');
    at += length - 4;
    const [old, next, ref] = line.split(' ');
    commands.push({ old: old!, next: next!, ref: ref! });
  }
  let record: PushRecord | null = null;
  try {
    record = unpack(target.git, body.subarray(at));
  } catch (error) {
    return { report: Buffer.from(`${pkt(`unpack ${(error as Error).message}\n`)}${commands.map((c) => pkt(`ng ${c.ref} unpacker error\n`)).join('')}0000`), record: null, updated: false };
  }
  let updated = false;
  const statuses = commands.map((c) => {
    const current = target.refs.get(c.ref) ?? ZERO;
    if (current !== c.old) return pkt(`ng ${c.ref} failed to update ref\n`);
    if (!target.git.commit(c.next)) return pkt(`ng ${c.ref} missing necessary objects\n`);
    if (current !== ZERO && !target.git.isAncestor(current, c.next)) return pkt(`ng ${c.ref} non-fast-forward\n`);
    target.refs.set(c.ref, c.next);
    updated = true;
    return pkt(`ok ${c.ref}\n`);
  });
  return { report: Buffer.from(`${pkt('unpack ok\n')}${statuses.join('')}0000`), record, updated };
}

/** Stores every object of a version-2 pack without deltas. */
function unpack(git: GitStore, pack: Buffer): PushRecord {
  if (pack.length === 0) return { objects: 0, blobs: 0, bytes: 0 };
  if (pack.subarray(0, 4).toString() !== 'PACK' || pack.readUInt32BE(4) !== 2) throw new Error('bad pack header');
  const count = pack.readUInt32BE(8);
  let at = 12;
  let blobs = 0;
  for (let i = 0; i < count; i++) {
    let byte = pack[at++]!;
    const type = TYPES[(byte >> 4) & 7];
    let size = byte & 0x0f;
    let shift = 4;
    while (byte & 0x80) {
      byte = pack[at++]!;
      size += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    }
    if (!type) throw new Error('delta objects are not supported by this emulator');
    const { buffer, engine } = inflateSync(pack.subarray(at), { info: true }) as unknown as { buffer: Buffer; engine: { bytesWritten: number } };
    at += engine.bytesWritten;
    if (buffer.length !== size) throw new Error('object size mismatch');
    if (!git.writeRaw(type, buffer)) throw new Error(`bad ${type} object`);
    if (type === 'blob') blobs++;
  }
  if (!createHash('sha1').update(pack.subarray(0, at)).digest().equals(pack.subarray(at, at + 20))) throw new Error('pack checksum mismatch');
  return { objects: count, blobs, bytes: pack.length };
}
