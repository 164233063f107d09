// What every hostile upload and every library look-up is held to: the contract's error
// shape, a sentence a person can read, nothing outside the container touched, no temp
// files, no job left running, and — when Ferry accepted the archive — exactly the right files.
import { createHash } from 'node:crypto';
import os from 'node:os';
import type { Expectation, Files } from './corpus.js';

/** Problems found, each naming the archive; the test fails with all of them at once. */
export class Problems {
  readonly list: string[] = [];
  add(archive: string, problem: string): void {
    this.list.push(`${archive}: ${problem}`);
  }
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** Null when `text` reads as a sentence for a person; else what is wrong with it. */
export function sentenceProblem(text: unknown, machinePaths: string[]): string | null {
  if (typeof text !== 'string') return `not a string: ${JSON.stringify(text)}`;
  if (text.length < 10) return `too short: ${JSON.stringify(text)}`;
  if (/undefined|\[object Object\]|\bNaN\b/.test(text)) return `says undefined/[object Object]/NaN: ${JSON.stringify(text)}`;
  if (/\n\s+at |\.(?:ts|js|mjs|cjs):\d+/.test(text)) return `holds a stack trace: ${JSON.stringify(text)}`;
  // the test's own root (data dir, workspace, spool) and the home folder; not bare /tmp,
  // which a hostile entry name like "../../tmp/x" quoted back rightly contains
  for (const machinePath of [...machinePaths, os.homedir()]) {
    if (machinePath.length > 1 && text.includes(machinePath)) return `holds a path of this machine: ${JSON.stringify(text)}`;
  }
  if (!/^[A-Z'"“‘]/.test(text)) return `does not start like a sentence: ${JSON.stringify(text)}`;
  return null;
}

/** `snapshot` entries ("file:<sha256>") under `prefix/`, by path relative to it. */
export function filesUnder(snapshot: Record<string, string>, prefix: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(snapshot)) {
    if (key.startsWith(`${prefix}/`) && value.startsWith('file:')) out[key.slice(prefix.length + 1)] = value.slice('file:'.length);
  }
  return out;
}

export type Outcome = 'refused' | 'failed' | 'succeeded';

/**
 * Does what was written (path → sha256, relative to the container; in a top-level upload
 * with the new folder's own name replaced by the archive's) fit the expectation?
 */
export function writtenProblem(expect: Expectation, outcome: Outcome, written: Record<string, string>): string | null {
  const paths = Object.keys(written).sort();
  const describe = () => paths.slice(0, 8).join(', ') + (paths.length > 8 ? ` … (${paths.length})` : '');
  const wanted = (files: Files) => Object.fromEntries(Object.entries(files).map(([p, b]) => [p, sha256(b)]));
  const isSubset = (files: Files) => {
    const hashes = wanted(files);
    return paths.every((p) => hashes[p] === written[p]);
  };
  const isExact = (files: Files) => {
    const hashes = wanted(files);
    return isSubset(files) && Object.keys(hashes).every((p) => hashes[p] === written[p]);
  };
  switch (expect.kind) {
    case 'refuse':
      if (outcome === 'succeeded') return `was accepted, but must be refused (wrote ${describe() || 'nothing'})`;
      return paths.length > 0 ? `was refused but left files behind: ${describe()}` : null;
    case 'exact':
      if (outcome !== 'succeeded') return 'was refused, but is a valid archive';
      return isExact(expect.files) ? null : `wrote ${describe() || 'nothing'}, not exactly ${Object.keys(expect.files).length} expected files`;
    case 'exact-or-fail':
      if (outcome === 'succeeded') return isExact(expect.files) ? null : `succeeded with ${describe() || 'nothing'}, not the expected files`;
      return isSubset(expect.files) ? null : `failed and left unexpected files: ${describe()}`;
    case 'subset-or-fail':
      return isSubset(expect.files) ? null : `wrote files that are not in the archive as made: ${describe()}`;
    case 'contents-or-fail': {
      const contents = new Set(Object.values(wanted(expect.files)));
      const stray = paths.filter((p) => !contents.has(written[p]!));
      return stray.length === 0 ? null : `wrote bytes that no file of the archive holds: ${stray.slice(0, 5).join(', ')}`;
    }
  }
}

/** Names a writer or the library uses for bytes still on their way. */
export function isTemporaryName(name: string): boolean {
  return /^\.ferry-.*\.part$/.test(name) || /\.(part|partial|tmp)$/.test(name);
}
