import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import type { GitStore } from './git-objects.js';
import { pkt, type PushTarget } from './receive-pack.js';

/**
 * The serving side of a shallow fetch over smart HTTP, for the emulators: the upload-pack ref
 * advertisement (gitprotocol-http; `symref=HEAD:refs/heads/<default>` among the capabilities)
 * and the answer to `want <oid>` + `deepen 1` + `done` (gitprotocol-pack "Packfile
 * Negotiation" and "shallow"): `shallow <oid>` lines, a flush, `NAK`, then the packfile on
 * side-band channel 1 in pieces of at most 65515 bytes, then a flush. Depth 1 only, no haves
 * used, whole objects (no deltas): what a shallow fetch of one branch head needs.
 */
const CAPABILITIES = 'multi_ack_detailed no-done side-band-64k thin-pack ofs-delta shallow deepen-since deepen-not deepen-relative no-progress include-tag allow-tip-sha1-in-want allow-reachable-sha1-in-want object-format=sha1 agent=git/2.39.5';
const TYPE_CODE = { commit: 1, tree: 2, blob: 3 } as const;

export function uploadAdvertisement(target: PushTarget, defaultBranch: string): Buffer {
  const refs = [...target.refs.entries()];
  const headOid = target.refs.get(`refs/heads/${defaultBranch}`);
  const all: [string, string][] = headOid ? [['HEAD', headOid], ...refs] : refs;
  const caps = `${CAPABILITIES}${headOid ? ` symref=HEAD:refs/heads/${defaultBranch}` : ''}`;
  const lines = all.map(([name, oid], i) => pkt(`${oid} ${name}${i === 0 ? `\0${caps}` : ''}\n`));
  return Buffer.from(`${pkt('# service=git-upload-pack\n')}0000${lines.join('')}0000`);
}

export function uploadPack(git: GitStore, request: Buffer): Buffer {
  const wants: string[] = [];
  let at = 0;
  while (at + 4 <= request.length) {
    const length = Number.parseInt(request.subarray(at, at + 4).toString(), 16);
    at += 4;
    if (!length) continue;
    const line = request.subarray(at, at + length - 4).toString('utf8').trim();
    at += length - 4;
    if (line.startsWith('want ')) wants.push(line.slice(5, 45));
  }
  const oids = new Set<string>();
  const visit = (sha: string) => {
    if (oids.has(sha)) return;
    oids.add(sha);
    for (const e of git.tree(sha) ?? []) if (e.mode !== '160000') visit(e.sha);
  };
  for (const want of wants) {
    oids.add(want);
    visit(git.commit(want)!.tree);
  }
  const parts: Buffer[] = [Buffer.from('PACK'), Buffer.alloc(8)];
  parts[1]!.writeUInt32BE(2, 0);
  parts[1]!.writeUInt32BE(oids.size, 4);
  for (const oid of oids) {
    const { type, body } = git.raw(oid)!;
    const header: number[] = [];
    let rest = Math.floor(body.length / 16);
    let byte = (TYPE_CODE[type] << 4) | (body.length & 15);
    while (rest > 0) {
      header.push(byte | 0x80);
      byte = rest & 0x7f;
      rest = Math.floor(rest / 128);
    }
    header.push(byte);
    parts.push(Buffer.from(header), deflateSync(body));
  }
  const pack = Buffer.concat(parts);
  const whole = Buffer.concat([pack, createHash('sha1').update(pack).digest()]);
  const out: Buffer[] = [...wants.map((w) => Buffer.from(pkt(`shallow ${w}\n`))), Buffer.from('0000'), Buffer.from(pkt('NAK\n'))];
  for (let i = 0; i < whole.length; i += 65515) {
    const piece = whole.subarray(i, i + 65515);
    out.push(Buffer.from((piece.length + 5).toString(16).padStart(4, '0')), Buffer.from([1]), piece);
  }
  out.push(Buffer.from('0000'));
  return Buffer.concat(out);
}
