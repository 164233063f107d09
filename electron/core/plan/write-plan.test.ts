// The write planner alone, over in-memory entries: each rule, its sentence, and that a plan
// hands the entries over unchanged. Every target's answer to the same rows is checked by the
// target contract suite (test/target-suite/write-rules.ts).
import { describe, expect, it } from 'vitest';
import { entriesFrom } from '../../../test/target-suite/test-entries.js';
import { FLAT_RECORD_NAMING_RULES } from '../remote/flat-record.js';
import { FerryError } from '../errors.js';
import { GIT_NAMING_RULES } from '../targets/forge/entries.js';
import type { Target } from '../target.js';
import { namingProblem, WINDOWS_FORBIDDEN_CHARACTERS, WINDOWS_RESERVED_BASENAMES, type NamingRules } from './naming-rules.js';
import { planWrite } from './write-plan.js';

function destination(namingRules?: NamingRules, checkName?: (name: string) => string | null): Target {
  return { info: { readable_name: 'Somewhere' }, namingRules, checkName } as unknown as Target;
}

async function answer(files: Record<string, string | null>, containerId: string | null = 'c', target = destination()): Promise<string | null> {
  try {
    await planWrite(target, entriesFrom(files), { containerId, duplicateAction: 'ignore', signal: new AbortController().signal });
    return null;
  } catch (error) {
    expect(error).toBeInstanceOf(FerryError);
    expect((error as FerryError).status).toBe(400);
    expect((error as FerryError).code).toBe('bad_request');
    return (error as Error).message;
  }
}

describe('the write planner', () => {
  it('passes a plain tree, entries unchanged and in order, each with the job duplicate policy', async () => {
    const files = { 'Top/': null, 'Top/a.txt': 'a', 'Top/sub/b.txt': 'b' };
    const plan = await planWrite(destination(), entriesFrom(files), { containerId: null, duplicateAction: 'update', signal: new AbortController().signal });
    expect(plan.top).toBe('Top');
    expect(plan.entries.map((p) => [p.entry.path, p.storedAs, p.onDuplicate])).toEqual([
      ['Top', '', 'update'],
      ['Top/a.txt', 'a.txt', 'update'],
      ['Top/sub/b.txt', 'sub/b.txt', 'update'],
    ]);
    const handed: string[] = [];
    for await (const entry of plan) handed.push(entry.path);
    expect(handed).toEqual(['Top', 'Top/a.txt', 'Top/sub/b.txt']);
  });

  it('refuses paths that leave their folder or cannot be shown', async () => {
    expect(await answer({ '../x': 'x' })).toBe('The entry "../x" contains ".." and would land outside its folder. Nothing was written.');
    expect(await answer({ '/etc/x': 'x' })).toBe('The entry "/etc/x" has an absolute path and would land outside its folder. Nothing was written.');
    expect(await answer({ 'a//b': 'x' })).toBe('The entry "a//b" has an empty or "." part in its path. Nothing was written.');
    expect(await answer({ 'a/\u0000b': 'x' })).toMatch(/has a NUL character in its name/);
    expect(await answer({ 'a/b\nc': 'x' })).toMatch(/has a control character \(LF\) in its name/);
  });

  it('refuses repeats, case and Unicode look-alikes, and a file that is also a folder', async () => {
    expect(await answer({ 'a/B.txt': '1', 'a/b.txt': '2' })).toBe(
      'The entries "a/B.txt" and "a/b.txt" have names that differ only in case or Unicode form, which many systems take as one name; rename one of them. Nothing was written.',
    );
    expect(await answer({ 'a/caf\u00e9.txt': '1', 'a/cafe\u0301.txt': '2' })).toMatch(/differ only in case or Unicode form/);
    expect(await answer({ 'A/x.txt': '1', 'a/y.txt': '2' })).toMatch(/^The entries "A" and "a" have names that differ/);
    expect(await answer({ 'a/x.txt': '1', 'a/x.txt/y': '2' })).toBe('The entries hold "a/x.txt" both as a file and as a folder. Nothing was written.');
    // a folder named again (after its files, as some readers list it) is one folder
    expect(await answer({ 'a/x.txt': '1', 'a/': null, 'b/': null, 'b/y.txt': '2' })).toBeNull();
  });

  it('keeps an explicit folder entry that comes after its files', async () => {
    const plan = await planWrite(destination(), entriesFrom({ 'a/x.txt': '1', 'a/': null, 'a//': null }), { containerId: 'c', duplicateAction: 'ignore', signal: new AbortController().signal });
    expect(plan.entries.map((p) => p.entry.path)).toEqual(['a/x.txt', 'a']);
  });

  it('begins a new top-level resource with its top folder, made when the source only implies it', async () => {
    const request = { containerId: null, duplicateAction: 'ignore' as const, signal: new AbortController().signal };
    const implied = await planWrite(destination(), entriesFrom({ 'Top/a.txt': 'a', 'Top/sub/b.txt': 'b' }), request);
    expect(implied.entries.map((p) => [p.entry.path, p.entry.kind])).toEqual([
      ['Top', 'folder'],
      ['Top/a.txt', 'file'],
      ['Top/sub/b.txt', 'file'],
    ]);
    const late = await planWrite(destination(), entriesFrom({ 'Top/a.txt': 'a', 'Top/': null }), request);
    expect(late.entries.map((p) => p.entry.path)).toEqual(['Top', 'Top/a.txt']);
  });

  it('makes a new top-level resource only from exactly one top folder', async () => {
    expect(await answer({ 'One/a.txt': '1', 'Two/b.txt': '2' }, null)).toBe(
      'A new top-level resource needs exactly one top-level folder; found 2 ("One", "Two"). Put everything in one folder, or write into an existing folder instead. Nothing was written.',
    );
    expect(await answer({ 'loose.txt': '1' }, null)).toBe(
      'A new top-level resource needs one top-level folder; "loose.txt" is a file. Put it in a folder, or write it into an existing folder instead. Nothing was written.',
    );
    expect(await answer({}, null)).toMatch(/found nothing/);
    // into a container, any number of top-level entries
    expect(await answer({ 'One/a.txt': '1', 'b.txt': '2' })).toBeNull();
  });

  it("judges every segment below the top folder by the destination's declared rules and checkName", async () => {
    const git = destination(GIT_NAMING_RULES);
    expect(await answer({ 'Top/.GIT/config': 'x' }, null, git)).toBe(
      `"Top/.GIT/config" cannot be written to Somewhere: '.GIT' is a reserved name there. Rename it and try again. Nothing was written.`,
    );
    // the top folder too (judged first: the plan begins with it): on a git server it becomes a folder of the repository
    expect(await answer({ '.git/a.txt': 'x' }, null, git)).toMatch(/^"\.git" cannot be written to Somewhere: '.git' is a reserved name there/);
    expect(await answer({ 'a/.git': 'x' }, 'c', git)).toMatch(/'.git' is a reserved name/);
    const temp = destination(undefined, (name) => (name.startsWith('.tmp-') ? 'temporary names are hidden' : null));
    expect(await answer({ 'd/.tmp-1': 'x' }, 'c', temp)).toMatch(/: temporary names are hidden\./);
  });

  it('stores paths flattened on a target without folders, and refuses two paths that become one name', async () => {
    const flat = destination(FLAT_RECORD_NAMING_RULES);
    const plan = await planWrite(flat, entriesFrom({ 'Top/': null, 'Top/raw/': null, 'Top/raw/run1.csv': '1' }), { containerId: null, duplicateAction: 'ignore', signal: new AbortController().signal });
    expect(plan.entries.map((p) => p.storedAs)).toEqual([null, null, 'raw__run1.csv']);
    expect(await answer({ 'raw/run1.csv': '1', 'raw__run1.csv': '2' }, 'c', flat)).toBe(
      '"raw/run1.csv" and "raw__run1.csv" would both be stored as "raw__run1.csv" on Somewhere, which keeps no folders inside a record (a folder\'s name is joined to the file\'s); rename one of them. Nothing was written.',
    );
    // look-alike paths get the same answer as everywhere, not the flat one
    expect(await answer({ 'a/B.txt': '1', 'a/b.txt': '2' }, 'c', flat)).toMatch(/^The entries "a\/B.txt" and "a\/b.txt" have names that differ only in case/);
  });
});

describe('naming rules', () => {
  const windows: NamingRules = { forbiddenCharacters: WINDOWS_FORBIDDEN_CHARACTERS, reservedBasenames: WINDOWS_RESERVED_BASENAMES, noTrailingDotOrSpace: true, evidence: 'test' };
  it('judges characters, reserved names and basenames, prefixes, extensions, endings and length', () => {
    expect(namingProblem(windows, 'a:b', 'file')).toBe("it contains ':'");
    expect(namingProblem(windows, 'nul.txt', 'file')).toBe("'nul' is a reserved name there, with any extension");
    expect(namingProblem(windows, 'CONSOLE', 'folder')).toBeNull();
    expect(namingProblem(windows, 'a.', 'folder')).toMatch(/ends in a dot or a space/);
    const dav: NamingRules = { reservedPrefixes: ['.ht'], forbiddenExtensions: ['.part'], maxNameBytes: 250, evidence: 'test' };
    expect(namingProblem(dav, '.HTaccess', 'file')).toBe("names beginning '.ht' are refused there");
    expect(namingProblem(dav, 'x.PART', 'file')).toBe("files ending '.part' are refused there");
    expect(namingProblem(dav, 'x.part', 'folder')).toBeNull();
    expect(namingProblem(dav, 'é'.repeat(126), 'file')).toBe('it is longer than 250 bytes');
    expect(namingProblem({ forbiddenFileCharacters: '#', evidence: 'test' }, 'a#b', 'folder')).toBeNull();
    expect(namingProblem(undefined, 'anything', 'file')).toBeNull();
  });
});
