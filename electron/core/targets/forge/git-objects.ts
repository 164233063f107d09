import { createHash } from 'node:crypto';

/**
 * Git's tree and commit objects as bytes (gitformat-pack / git's object format), and their
 * ids: sha1("<type> <size>\0" + body). Ferry builds a push's trees and its one commit itself,
 * so the ids it pushes are exactly the ids git computes.
 */
export type ObjectType = 'commit' | 'tree' | 'blob';

export const ZERO_OID = '0000000000000000000000000000000000000000';

export function objectId(type: ObjectType, body: Buffer): string {
  return createHash('sha1').update(`${type} ${body.length}\0`).update(body).digest('hex');
}

export interface TreeEntry {
  /** git's own spelling: "100644", "100755", "120000", "160000", "40000" */
  mode: string;
  name: string;
  oid: string;
}

/** A tree's body: entries sorted as git sorts them (a tree's name compared as if it ended in "/"). */
export function treeBody(entries: TreeEntry[]): Buffer {
  const key = (e: TreeEntry) => Buffer.from(e.mode === '40000' ? `${e.name}/` : e.name, 'utf8');
  const sorted = [...entries].sort((a, b) => Buffer.compare(key(a), key(b)));
  return Buffer.concat(sorted.flatMap((e) => [Buffer.from(`${e.mode} ${e.name}\0`, 'utf8'), Buffer.from(e.oid, 'hex')]));
}

export interface Person {
  name: string;
  email: string;
}

export function commitBody(tree: string, parents: string[], message: string, who: Person, when: Date): Buffer {
  // "<name> <<email>> <epoch seconds> <tz>"; angle brackets and newlines would break the header
  const clean = (s: string) => s.replace(/[<>\n]/g, '');
  const stamp = `${clean(who.name)} <${clean(who.email)}> ${Math.floor(when.getTime() / 1000)} +0000`;
  const lines = [`tree ${tree}`, ...parents.map((p) => `parent ${p}`), `author ${stamp}`, `committer ${stamp}`, '', message.endsWith('\n') ? message : `${message}\n`];
  return Buffer.from(lines.join('\n'), 'utf8');
}

/** git's tree mode for a kind of entry, from any spelling a host reports ("040000" on GitHub). */
export function normalMode(mode: string, type: 'blob' | 'tree' | 'commit'): string {
  if (type === 'tree') return '40000';
  if (type === 'commit') return '160000';
  return mode === '100755' || mode === '120000' ? mode : '100644';
}
