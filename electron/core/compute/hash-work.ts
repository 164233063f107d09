import { createHash, type Hash } from 'node:crypto';
import type { HashReply, HashRequest } from './messages.js';

// On a compute thread, for the hash pool (hashing.ts): the digests of streams whose bytes come
// through shared rings. Each slot is acknowledged once hashed, so the stream can fill it again.

const rings = new Map<number, Buffer>();
const sessions = new Map<number, Map<string, Hash>>();

export function answerHash(m: HashRequest, reply: (message: HashReply) => void): void {
  switch (m.op) {
    case 'ring':
      rings.set(m.ring, Buffer.from(m.buffer));
      return;
    case 'start':
      sessions.set(m.id, new Map(m.algorithms.map((algorithm) => [algorithm, createHash(algorithm)])));
      return;
    case 'update': {
      const hashes = sessions.get(m.id);
      const ring = rings.get(m.ring);
      if (hashes && ring) {
        const bytes = ring.subarray(m.offset, m.offset + m.length);
        for (const hash of hashes.values()) hash.update(bytes);
      }
      reply({ kind: 'hash', op: 'ack', ring: m.ring, slot: m.slot });
      return;
    }
    case 'digest': {
      const hashes = sessions.get(m.id);
      sessions.delete(m.id);
      const hex: Record<string, string> = {};
      if (hashes) for (const [algorithm, hash] of hashes) hex[algorithm] = hash.digest('hex');
      reply({ kind: 'hash', op: 'digest', id: m.id, hex: hashes ? hex : null });
      return;
    }
    case 'drop':
      sessions.delete(m.id);
      return;
  }
}
