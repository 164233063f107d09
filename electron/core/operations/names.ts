// The one rule for a name a person gives a file or folder (rename, new folder), whatever the
// target: a single path segment, never a way out of its folder. A target adds its own
// naming rules (Target.namingRules) and reserved names (Target.checkName); both answers are sentences.
import { badRequest } from '../errors.js';
import { namingProblem } from '../plan/naming-rules.js';
import type { Target } from '../target.js';

/** Why `name` cannot name a file or folder anywhere, or null. */
export function nameProblem(name: string): string | null {
  if (name.length === 0 || name.trim().length === 0) return 'it is empty';
  if (name.includes('\0')) return 'it contains a NUL character';
  if (name.includes('/')) return "it contains '/', which separates folders";
  if (name.includes('\\')) return "it contains '\\', which separates folders on Windows";
  if (name === '.' || name === '..') return `'${name}' names a folder itself, not an entry in it`;
  // eslint-disable-next-line no-control-regex -- control characters are what this refuses
  if (/[\u0001-\u001f\u007f]/.test(name)) return 'it contains a control character (such as a line break)';
  if (Buffer.byteLength(name, 'utf8') > 255) return 'it is longer than 255 bytes';
  return null;
}

/** The name, checked against the core's rule and the target's own; a 400 with both in a sentence otherwise. */
export function checkName(target: Target, name: unknown): string {
  if (typeof name !== 'string') throw badRequest('Send the new name as "title", a string.');
  const problem = nameProblem(name) ?? namingProblem(target.namingRules, name, 'file') ?? target.checkName?.(name) ?? null;
  if (problem !== null) {
    const shown = name.length > 80 ? `${name.slice(0, 80)}…` : name;
    throw badRequest(`'${shown}' cannot be a name on ${target.info.readable_name}: ${problem}. Choose another name.`);
  }
  return name;
}
