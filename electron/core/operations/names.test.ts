import { describe, expect, it } from 'vitest';
import { FerryError } from '../errors.js';
import type { Target } from '../target.js';
import { checkName, nameProblem } from './names.js';

describe('the one name rule', () => {
  it.each([
    ['', 'it is empty'],
    ['   ', 'it is empty'],
    ['a/b', "it contains '/', which separates folders"],
    ['a\\b', "it contains '\\', which separates folders on Windows"],
    ['..', "'..' names a folder itself, not an entry in it"],
    ['.', "'.' names a folder itself, not an entry in it"],
    ['x\0y', 'it contains a NUL character'],
    ['line\nbreak', 'it contains a control character (such as a line break)'],
    ['é'.repeat(128), 'it is longer than 255 bytes'],
  ])('refuses %j: %s', (name, why) => {
    expect(nameProblem(name)).toBe(why);
  });

  it.each(['a.txt', '..hidden', 'a..b', '.env', 'Ünïcödé name (2)', 'é'.repeat(127)])('allows %j', (name) => {
    expect(nameProblem(name)).toBeNull();
  });

  it("adds the target's own reserved names, in one sentence naming the target", () => {
    const target = { info: { readable_name: 'WebDAV' }, checkName: (name: string) => (name.endsWith('.part') ? 'the server keeps .part names for itself' : null) } as unknown as Target;
    expect(checkName(target, 'ok.txt')).toBe('ok.txt');
    const error = (() => { try { checkName(target, 'x.part'); } catch (e) { return e as FerryError; } return null; })();
    expect(error?.status).toBe(400);
    expect(error?.message).toBe("'x.part' cannot be a name on WebDAV: the server keeps .part names for itself. Choose another name.");
    expect(() => checkName(target, 42)).toThrow(/"title", a string/);
  });
});
