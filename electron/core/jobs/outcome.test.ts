import { describe, expect, it } from 'vitest';
import type { JobReport } from '../../../shared/api.js';
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
