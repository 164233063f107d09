import { describe, expect, it } from 'vitest';
import type { CheckReport, JobReport } from '../../../shared/api.js';
import { endingOf, failedFilesOfVerify, failedFilesOfWrite } from './outcome.js';
import { emptyReport } from './types.js';

const report = (fields: Partial<JobReport>): JobReport => ({ ...emptyReport(), ...fields });
const fixity = (path: string, algorithm = 'md5') => ({ path, algorithm, expected: 'aa', actual: 'bb' });

describe('endingOf: which status an outcome gets', () => {
  it.each([
    ['nothing failed', report({ resources_created: ['D', 'D/a.txt'] }), 'succeeded'],
    ['nothing to do at all', report({}), 'succeeded'],
    ['identical files left alone', report({ resources_ignored: ['D/a.txt'] }), 'succeeded'],
    [
      'one file failed, one arrived',
      report({ resources_created: ['D', 'D/a.txt'], failed_files: [{ path: 'D/b.txt', stage: 'write', error: 'The server went away.' }] }),
      'completed_with_errors',
    ],
    [
      'the only file failed: its folder being made is not an arrival',
      report({ resources_created: ['D'], failed_files: [{ path: 'D/b.txt', stage: 'fixity', error: 'x' }] }),
      'failed',
    ],
    [
      'a top-level folder only, under a new name, its one file failed',
      report({ resources_created: ['D (2)'], file_errors: [{ path: 'D (2)/b.txt', error: 'x' }], failed_files: [{ path: 'D/b.txt', stage: 'write', error: 'x' }] }),
      'failed',
    ],
    ['a verification with one mismatch', report({ verified: ['a.txt'], failed_files: [{ path: 'b.txt', stage: 'verify', error: 'x' }] }), 'completed_with_errors'],
    ['a verification where every file failed', report({ verified: [], failed_files: [{ path: 'b.txt', stage: 'read', error: 'x' }] }), 'failed'],
  ] as const)('%s → %s', (_name, outcome, status) => {
    const ending = endingOf(outcome);
    expect(ending.status).toBe(status);
    if (status === 'succeeded') expect(ending.error).toBeNull();
    else expect(ending.error).toMatch(/^(Nothing arrived: )?1 file failed: '[^']+' \(/);
  });

  it('says, when nothing arrived, why the first file failed (the service, the name …)', () => {
    const failed_files = ['a', 'b'].map((name) => ({ path: `D/${name}`, stage: 'write' as const, error: 'OSF did not answer within 60 s; try again later' }));
    expect(endingOf(report({ failed_files })).error).toBe(
      "Nothing arrived: 2 files failed: 'D/a' (could not be written), 'D/b' (could not be written). OSF did not answer within 60 s; try again later. The report lists each file with its reason.",
    );
  });

  it('names at most three files and counts the rest', () => {
    const failed_files = ['a', 'b', 'c', 'd', 'e'].map((name) => ({ path: `D/${name}`, stage: 'write' as const, error: 'x' }));
    const ending = endingOf(report({ resources_created: ['D/z'], failed_files }));
    expect(ending.error).toBe(
      "5 files failed: 'D/a' (could not be written), 'D/b' (could not be written), 'D/c' (could not be written) and 2 more; " +
        'the other file arrived and passed its checks. Retry the failed files, or see the report for each reason.',
    );
  });
});

describe('failedFilesOfWrite', () => {
  it('gives one entry per file: a fixity failure once (not again as the writer\'s error), write errors mapped back to the source path', () => {
    const failed = failedFilesOfWrite(
      [fixity('D/b.txt', 'md5'), fixity('D/b.txt', 'sha256')],
      [
        { path: 'D (2)/b.txt', error: 'the stream broke' },
        { path: 'D (2)/c.txt', error: 'Permission denied.' },
      ],
      { from: 'D', to: 'D (2)' },
    );
    expect(failed).toEqual([
      { path: 'D/b.txt', stage: 'fixity', algorithm: 'md5', expected: 'aa', actual: 'bb', error: expect.stringMatching(/^'D\/b.txt' does not match its md5 checksum \(expected aa, got bb\) and 1 more check; .*did not write it\.$/) },
      { path: 'D/c.txt', stage: 'write', error: 'Permission denied.' },
    ]);
  });

  it('reads an unreadable file as a read failure with the reader\'s sentence', () => {
    expect(failedFilesOfWrite([{ path: 'a', algorithm: 'read', expected: 'readable bytes', actual: 'The archive is damaged.' }], [], null)).toEqual([
      { path: 'a', stage: 'read', error: 'The archive is damaged.' },
    ]);
  });
});

describe('failedFilesOfVerify', () => {
  it('one entry per file, with what was expected and found', () => {
    expect(failedFilesOfVerify([fixity('x.bin', 'sha256'), fixity('x.bin', 'crc32')])).toEqual([
      {
        path: 'x.bin',
        stage: 'verify',
        algorithm: 'sha256',
        expected: 'aa',
        actual: 'bb',
        error: "The stored bytes of 'x.bin' do not match its sha256 checksum (expected aa, got bb) and 1 more check.",
      },
    ]);
  });
});

describe('endingOf a check: its findings decide, never an empty failed_files alone', () => {
  const check = (fields: Partial<CheckReport>): JobReport =>
    report({
      check: {
        matched: 2,
        missing: [],
        extra: [],
        different: [],
        not_comparable: [],
        compared_by: { hash: 2, size: 0 },
        algorithms: { sha256: 2 },
        read_bytes: false,
        read: { files: 0, bytes: 0 },
        ...fields,
      },
    });

  it.each([
    ['every file matched', check({}), 'succeeded', null],
    ['matched by size only (the report says so)', check({ compared_by: { hash: 0, size: 2 }, algorithms: {} }), 'succeeded', null],
    ['nothing on either side', check({ matched: 0, compared_by: { hash: 0, size: 0 } }), 'succeeded', null],
    ['a file missing', check({ missing: ['D/b.txt'] }), 'completed_with_errors', /^The resources differ: 1 missing \('D\/b.txt'\); 2 files matched\./],
    ['a file only in the destination', check({ extra: ['D/new.txt'] }), 'completed_with_errors', /1 extra \('D\/new.txt'\)/],
    [
      'a file whose bytes differ',
      check({ different: [{ path: 'D/a.txt', by: 'hash', algorithm: 'sha256', source: 'aa', destination: 'bb' }] }),
      'completed_with_errors',
      /1 different \('D\/a.txt'\)/,
    ],
    [
      'a file that could not be compared',
      check({ not_comparable: [{ path: 'D/a.txt', reason: 'no size' }] }),
      'completed_with_errors',
      /1 not comparable \('D\/a.txt'\)/,
    ],
    [
      'every file missing: the check still completed',
      check({ matched: 0, missing: ['D', 'D/a', 'D/b', 'D/c', 'D/d'] }),
      'completed_with_errors',
      /5 missing \('D', 'D\/a', 'D\/b' and 2 more\); 0 files matched/,
    ],
  ] as const)('%s → %s', (_name, outcome, status, sentence) => {
    const ending = endingOf(outcome);
    expect(ending.status).toBe(status);
    if (sentence === null) expect(ending.error).toBeNull();
    else expect(ending.error).toMatch(sentence);
  });
});
