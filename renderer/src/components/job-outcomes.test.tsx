import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, render, screen } from '@testing-library/react';
import type { Job, JobReport } from '../../../shared/api.js';
import { job } from '../test-support.js';
import { canRetryFailedFiles, mergeJob, outcomeOf, retryLabel } from '../stores/jobs.js';
import { FailedFiles, JobProgressBar, jobLabel, Report, resumedText } from './JobsPanel.js';

afterEach(cleanup);

const report = (fields: Partial<JobReport>): JobReport => ({
  resources_created: [],
  resources_updated: [],
  resources_ignored: [],
  failed_fixity: [],
  file_errors: [],
  failed_files: [],
  new_resource: null,
  ...fields,
});
const ended = (status: Job['status'], fields: Partial<JobReport>, kind: Job['kind'] = 'transfer'): Job => ({ ...job('t', status), kind, report: report(fields) });
const badCrc = { path: 'Data/bad.txt', stage: 'fixity' as const, algorithm: 'crc32', expected: '0a0b0c0d', actual: '11223344', error: "'Data/bad.txt' does not match its CRC-32 in the ZIP (expected 0a0b0c0d, got 11223344); the source's copy is damaged, so Ferry did not write it." };

describe('job outcomes in the store', () => {
  it('gives each finished state its own tone: only succeeded reads as complete', () => {
    expect(['queued', 'running', 'succeeded', 'completed_with_errors', 'failed', 'cancelled'].map((status) => outcomeOf(job('t', status as Job['status'])))).toEqual([
      'pending',
      'pending',
      'complete',
      'partial',
      'failed',
      'incomplete',
    ]);
  });

  it('treats completed_with_errors as finished: never moved back, never replaced by another end', () => {
    const partial = mergeJob(undefined, job('t', 'completed_with_errors', 500), 0);
    expect(mergeJob(partial, job('t', 'running', 600), 1)).toBe(partial);
    expect(mergeJob(partial, job('t', 'succeeded', 1000), 1)).toBe(partial);
    expect(partial.speed).toBeNull();
  });

  it('offers "Retry failed files" only for a finished job with failed files that the server can retry', () => {
    expect(canRetryFailedFiles(ended('completed_with_errors', { failed_files: [badCrc] }))).toBe(true);
    expect(canRetryFailedFiles(ended('failed', { failed_files: [badCrc] }))).toBe(true);
    expect(canRetryFailedFiles(ended('succeeded', {}))).toBe(false);
    expect(canRetryFailedFiles(ended('cancelled', {}))).toBe(false);
    expect(canRetryFailedFiles(ended('completed_with_errors', { failed_files: [badCrc] }, 'upload'))).toBe(false);
    expect(canRetryFailedFiles({ ...job('t', 'running'), report: report({ failed_files: [badCrc] }) })).toBe(false);
  });

  it('names a retry after what it retries, once', () => {
    expect(retryLabel('Local → WebDAV')).toBe('Retry failed files: Local → WebDAV');
    expect(retryLabel(retryLabel('Local → WebDAV'))).toBe('Retry failed files: Local → WebDAV');
    const retried = { ...job('t', 'queued'), source: { target: 'offline', resource_id: 'x' }, retry_of: 'first' };
    expect(jobLabel(retried, undefined, (name) => name.toUpperCase(), () => null)).toBe('Retry failed files: OFFLINE → LOCAL');
  });
});

describe('a resumed job', () => {
  it('says how many files an earlier run had done, and nothing for a first run', () => {
    expect(resumedText({ ...job('t', 'running'), resumed: { files_already_done: 412, from: null } })).toBe('Resumed, 412 files already done.');
    expect(resumedText({ ...job('t', 'running'), resumed: { files_already_done: 1, from: 'first' } })).toBe('Resumed, 1 file already done.');
    expect(resumedText(job('t', 'running'))).toBeNull();
  });
});

describe('the report of a job that did not succeed', () => {
  it('lists every failed file with its sentence', () => {
    render(<FailedFiles job={ended('completed_with_errors', { resources_created: ['Data/good.txt'], failed_files: [badCrc] })} />);
    expect(screen.getByText('1 file failed')).toBeTruthy();
    const items = screen.getByRole('list', { name: 'Failed files' }).querySelectorAll('li');
    expect(items).toHaveLength(1);
    // the sentence names the file: not said twice
    expect(items[0]!.textContent).toBe(badCrc.error);
    cleanup();
    render(<FailedFiles job={ended('failed', { failed_files: [{ path: 'Data/c.txt', stage: 'write', error: 'The WebDAV server did not answer in time; try again later.' }] })} />);
    expect(screen.getByRole('list', { name: 'Failed files' }).textContent).toBe('Data/c.txt: The WebDAV server did not answer in time; try again later.');
  });

  it('never says "Nothing needed to change" unless the job succeeded; says what may have been written', () => {
    render(<Report job={ended('failed', { failed_files: [badCrc], unconfirmed: ['Data/a.txt'] })} />);
    expect(screen.queryByText('Nothing needed to change.')).toBeNull();
    expect(screen.getByText('No file was confirmed written.')).toBeTruthy();
    expect(screen.getByText('1 file may have been written before the job stopped')).toBeTruthy();
    cleanup();
    render(<Report job={ended('failed', { failed_files: [badCrc] })} />);
    expect(screen.getByText('Nothing was written.')).toBeTruthy();
    cleanup();
    render(<Report job={ended('succeeded', {})} />);
    expect(screen.getByText('Nothing needed to change.')).toBeTruthy();
  });
});

describe('the progress bar of a job', () => {
  it('shows a share only where the total is known', () => {
    render(<JobProgressBar job={job('t', 'running', 250, 1000)} label="known" />);
    const bar = screen.getByRole('progressbar', { name: 'Progress of known' });
    expect(bar.getAttribute('aria-valuenow')).toBe('25');
    expect((bar.firstElementChild as HTMLElement).style.width).toBe('25%');
    expect(bar.className).toBe('progress');
  });

  it('shows a running job with no total yet as motion, with no value and no made-up width', () => {
    render(<JobProgressBar job={job('t', 'running', 250, null)} label="unknown" />);
    const bar = screen.getByRole('progressbar', { name: 'Progress of unknown' });
    expect(bar.className).toBe('progress indeterminate');
    expect(bar.getAttribute('aria-valuenow')).toBeNull();
    expect((bar.firstElementChild as HTMLElement).style.width).toBe('');
  });
});
