import { describe, expect, it } from 'vitest';
import type { Job } from '../../../shared/api.js';
import { logLines } from './JobLog.js';

const job = (report: Partial<NonNullable<Job['report']>>): Job =>
  ({
    ticket_number: 't',
    kind: 'transfer',
    status: 'completed_with_errors',
    report: { resources_created: [], resources_updated: [], resources_ignored: [], failed_fixity: [], file_errors: [], ...report },
  }) as unknown as Job;

describe('a job log', () => {
  it('lists failures first, each written file with how it was checked, and files an earlier run did', () => {
    const lines = logLines(
      job({
        resources_created: ['a.txt', 'b.txt'],
        resources_updated: ['c.txt'],
        resources_ignored: ['d.txt'],
        failed_files: [{ path: 'e.txt', stage: 'verify', error: 'Zenodo records md5 x' }],
        written_checks: [
          { path: 'a.txt', result: 'verified', detail: "Zenodo's md5 and size of the stored file matched the bytes sent." },
          { path: 'c.txt', result: 'not_verifiable', detail: 'Not verifiable: Zenodo reports no checksum of the stored file.' },
        ],
        already_done: ['f.txt'],
      }),
    );
    expect(lines).toEqual([
      { path: 'e.txt', result: 'failed', detail: 'Zenodo records md5 x' },
      { path: 'a.txt', result: 'written', detail: "Zenodo's md5 and size of the stored file matched the bytes sent." },
      { path: 'b.txt', result: 'written' },
      { path: 'c.txt', result: 'updated', detail: 'Not verifiable: Zenodo reports no checksum of the stored file.' },
      { path: 'd.txt', result: 'skipped' },
      { path: 'f.txt', result: 'already' },
    ]);
  });

  it('is empty before a report exists', () => {
    expect(logLines({ ...job({}), report: null } as Job)).toEqual([]);
  });
});
