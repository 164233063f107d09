// The write rules, table-driven, for every target the contract suite runs (issue #18): each
// row is a bad or edge input and the one answer the core gives for it — the same status,
// code and sentence on every target — and afterwards the service holds nothing new. Writes
// go the way a job sends them: through the core's planner (plan/write-plan.ts), then the
// target. Rows a target has no rule for are skipped with a printed reason.

import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { FerryError } from '../../electron/core/errors.js';
import { namingProblem, type NamingRules } from '../../electron/core/plan/naming-rules.js';
import { planWrite } from '../../electron/core/plan/write-plan.js';
import type { Entry, ResourceNode, Target, TargetContext, WriteOutcome } from '../../electron/core/target.js';
import { collect, entriesFrom } from './test-entries.js';
import type { TargetFixture } from './target-contract.js';

type Tree = Record<string, string | null>;

interface Row {
  row: string;
  /** null: a new top-level resource */
  into: 'container' | null;
  tree: Tree;
  /** the sentence every target answers with (all are 400 bad_request) */
  answer: string;
}

const SAME_EVERYWHERE: Row[] = [
  {
    row: 'two top folders for a new top-level resource',
    into: null,
    tree: { 'RuleOne/': null, 'RuleOne/a.txt': '1', 'RuleTwo/': null, 'RuleTwo/b.txt': '2' },
    answer: 'A new top-level resource needs exactly one top-level folder; found 2 ("RuleOne", "RuleTwo"). Put everything in one folder, or write into an existing folder instead. Nothing was written.',
  },
  {
    row: 'a file at the top of a new top-level resource',
    into: null,
    tree: { 'loose.txt': '1' },
    answer: 'A new top-level resource needs one top-level folder; "loose.txt" is a file. Put it in a folder, or write it into an existing folder instead. Nothing was written.',
  },
  { row: "'../x'", into: 'container', tree: { 'ok.txt': '1', '../x': '2' }, answer: 'The entry "../x" contains ".." and would land outside its folder. Nothing was written.' },
  { row: 'an absolute path', into: 'container', tree: { '/tmp/x': '1' }, answer: 'The entry "/tmp/x" has an absolute path and would land outside its folder. Nothing was written.' },
  {
    row: "'a/B.txt' and 'a/b.txt'",
    into: 'container',
    tree: { 'a/': null, 'a/B.txt': '1', 'a/b.txt': '2' },
    answer: 'The entries "a/B.txt" and "a/b.txt" have names that differ only in case or Unicode form, which many systems take as one name; rename one of them. Nothing was written.',
  },
  {
    row: 'NFC and NFD twins',
    into: 'container',
    tree: { 'a/caf\u00e9.txt': '1', 'a/cafe\u0301.txt': '2' },
    answer: 'The entries "a/caf\u00e9.txt" and "a/cafe\u0301.txt" have names that differ only in case or Unicode form, which many systems take as one name; rename one of them. Nothing was written.',
  },
  {
    row: 'NFC and NFD twins in a new top-level resource',
    into: null,
    tree: { 'Top/': null, 'Top/caf\u00e9/x.txt': '1', 'Top/cafe\u0301/y.txt': '2' },
    answer: 'The entries "Top/caf\u00e9" and "Top/cafe\u0301" have names that differ only in case or Unicode form, which many systems take as one name; rename one of them. Nothing was written.',
  },
];

/** The row of a name this target's declared rules refuse, with the sentence it gets; null when it declares none. */
function reservedRow(target: Target): Row | null {
  const rules: NamingRules | undefined = target.namingRules;
  if (!rules) return null;
  const name = rules.reservedNames?.[0] ?? (rules.reservedPrefixes?.[0] && `${rules.reservedPrefixes[0]}x`) ?? (rules.forbiddenExtensions?.[0] && `x${rules.forbiddenExtensions[0]}`) ??
    (rules.forbiddenCharacters?.[0] && `a${rules.forbiddenCharacters[0]}b.txt`) ?? (rules.forbiddenFileCharacters?.[0] && `a${rules.forbiddenFileCharacters[0]}b.txt`) ??
    (rules.reservedBasenames?.[0] && `${rules.reservedBasenames[0]}.txt`) ?? null;
  if (name) {
    const path = `rules/${name}`;
    return { row: `the reserved name '${name}'`, into: 'container', tree: { 'rules/': null, [path]: '1' }, answer: `"${path}" cannot be written to ${target.info.readable_name}: ${namingProblem(rules, name, 'file')}. Rename it and try again. Nothing was written.` };
  }
  if (rules.flattenWith) {
    const joined = `raw${rules.flattenWith}run.csv`;
    return {
      row: `'raw/run.csv' beside '${joined}' (no folders in a record)`,
      into: 'container',
      tree: { 'raw/': null, 'raw/run.csv': '1', [joined]: '2' },
      answer: `"raw/run.csv" and "${joined}" would both be stored as "${joined}" on ${target.info.readable_name}, which keeps no folders inside a record (a folder's name is joined to the file's); rename one of them. Nothing was written.`,
    };
  }
  return null;
}

export function describeWriteRules(name: string, fixtureOf: () => TargetFixture): void {
  describe('write rules (the core planner, then the target)', () => {
    let fixture: TargetFixture;
    const context = (): TargetContext => ({ token: fixture.token, signal: new AbortController().signal });
    const writable = () => fixture.target.info.supported_actions.resource_upload && fixture.target.info.supported_actions.resource_collection;
    /** What the service lists, as comparable rows. */
    const snapshot = async (): Promise<string[]> => (await collect(fixture.target.list(context()))).map((node: ResourceNode) => `${node.container ?? ''}|${node.id}|${node.title}`).sort();
    const plannedWrite = async (into: string | null, entries: AsyncIterable<Entry>, duplicateAction: 'ignore' | 'update'): Promise<WriteOutcome> => {
      const signal = new AbortController().signal;
      const plan = await planWrite(fixture.target, entries, { containerId: into, duplicateAction, signal });
      return fixture.target.write(context(), into, plan, { duplicateAction, signal, jobLabel: `Ferry write rules ${name}`, plan });
    };

    beforeAll(() => {
      fixture = fixtureOf();
    });

    for (const row of SAME_EVERYWHERE) {
      it(`answers ${row.row} as every target does, and writes nothing`, async ({ skip }) => {
        if (!writable()) {
          console.info(`[write rules] ${name}: skipped, it takes no uploads`);
          skip();
        }
        await expectRefused(row.into === null ? null : fixture.writableContainerId, entriesFrom(row.tree), row.answer);
      });
    }

    // a map cannot hold one key twice: this row's entries come from a read that repeats one
    it('answers one path given twice as every target does, and writes nothing', async ({ skip }) => {
      if (!writable()) skip();
      await expectRefused(fixture.writableContainerId, twice('dup/x.txt'), 'The entries hold "dup/x.txt" twice; each path may appear only once. Nothing was written.');
    });

    it("refuses a name the target's declared rules forbid, before the service sees it", async ({ skip }) => {
      if (!writable()) skip();
      const row = reservedRow(fixture.target);
      if (!row) {
        console.info(`[write rules] ${name}: declares no naming rules beyond the core's, so there is no reserved-name row`);
        skip();
      }
      await expectRefused(fixture.writableContainerId, entriesFrom(row!.tree), row!.answer);
    });

    describe('a file that exists, under each duplicate policy', () => {
      const folder = `ferry-rules-${randomBytes(4).toString('hex')}`;
      const file = `${folder}/dup.txt`;
      it('ignore: left as it is, reported ignored; update with the same bytes: ignored; update with other bytes: updated', async ({ skip }) => {
        if (!writable()) skip();
        const first = await plannedWrite(fixture.writableContainerId, entriesFrom({ [`${folder}/`]: null, [file]: 'first\n' }), 'ignore');
        expect(first.created).toContain(file);
        const cases: [ 'ignore' | 'update', string, keyof Pick<WriteOutcome, 'ignored' | 'updated'>][] = [
          ['ignore', 'changed but ignored\n', 'ignored'],
          ['update', 'first\n', 'ignored'],
          ['update', 'second\n', 'updated'],
        ];
        for (const [policy, content, bucket] of cases) {
          const outcome = await plannedWrite(fixture.writableContainerId, entriesFrom({ [`${folder}/`]: null, [file]: content }), policy);
          expect(outcome.fileErrors, `${policy} '${content.trim()}'`).toEqual([]);
          expect(outcome.created.filter((path) => path === file), `${policy} '${content.trim()}' creates nothing`).toEqual([]);
          expect(outcome[bucket], `${policy} '${content.trim()}' → ${bucket}`).toEqual([file]);
        }
      });
    });

    async function expectRefused(into: string | null, entries: AsyncIterable<Entry>, answer: string): Promise<void> {
      const before = await snapshot();
      const error = await plannedWrite(into, entries, 'update').then(
        () => null,
        (thrown: unknown) => thrown,
      );
      expect(error, 'the write is refused').toBeInstanceOf(FerryError);
      expect({ status: (error as FerryError).status, code: (error as FerryError).code, sentence: (error as FerryError).message }).toEqual({ status: 400, code: 'bad_request', sentence: answer });
      expect(await snapshot(), 'the service holds nothing new').toEqual(before);
    }
  });
}

/** A read that names one file twice (a source listing it on two pages, say). */
async function* twice(path: string): AsyncIterable<Entry> {
  for (const content of ['1', '2']) yield* entriesFrom({ [path]: content });
}
