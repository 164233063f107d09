import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import type { Job } from '../../../shared/api.js';
import { job } from '../test-support.js';
import { ArchiveHealth, FileFixityState } from './DetailPanel.js';
import { jobLabel, VerifyReport } from './JobsPanel.js';

afterEach(cleanup);

describe('file fixity in the detail panel', () => {
  it('verified reads as a check mark with the time', () => {
    render(<FileFixityState fixity={{ state: 'verified', checked_at: '2026-03-01T10:00:00.000000Z' }} />);
    const section = screen.getByRole('region', { name: 'Fixity' });
    expect(section.textContent).toContain('✓ Verified — the bytes match every recorded checksum.');
    expect(section.textContent).toContain('Checked');
  });

  it('failed names the algorithm, what was expected and what was found', () => {
    render(
      <FileFixityState
        fixity={{
          state: 'failed',
          checked_at: '2026-03-01T10:00:00.000000Z',
          failures: [
            { algorithm: 'sha256', expected: 'aaaa', actual: 'bbbb', against: 'manifest' },
            { algorithm: 'md5', expected: 'cccc', actual: 'dddd', against: 'provenance' },
          ],
        }}
      />,
    );
    expect(screen.getByRole('alert').textContent).toContain('✗ Failed fixity — the bytes no longer match');
    const items = screen.getAllByRole('listitem');
    expect(items).toHaveLength(2);
    expect(items[0]!.textContent).toContain('sha256');
    expect(items[0]!.textContent).toContain("against the bag's manifest");
    expect(items[0]!.textContent).toMatch(/expected\s*aaaa\s*actual\s*bbbb/);
    expect(items[1]!.textContent).toMatch(/md5.*cccc.*dddd/);
  });

  it('a single failure given flat (no list) is still shown', () => {
    render(<FileFixityState fixity={{ state: 'failed', algorithm: 'crc32', expected: '0000', actual: 'ffff', against: 'zip' }} />);
    expect(screen.getByRole('listitem').textContent).toMatch(/crc32.*CRC-32.*0000.*ffff/);
  });

  it('unverified says how to verify', () => {
    render(<FileFixityState fixity={{ state: 'unverified' }} />);
    expect(screen.getByRole('region', { name: 'Fixity' }).textContent).toContain('Not verified yet');
  });
});

describe('archive health', () => {
  it('a damaged archive says so first, with the reason', () => {
    render(
      <ArchiveHealth
        state="damaged"
        error="The archive is damaged: the central directory is cut short."
        fixity={{ verified_at: null, verified: 0, failed: 0 }}
        files={0}
        onVerify={vi.fn()}
      />,
    );
    const alert = screen.getByRole('alert');
    expect(alert.textContent).toContain('This archive is damaged');
    expect(alert.textContent).toContain('central directory is cut short');
    expect(screen.queryByRole('button')).toBeNull(); // nothing to verify in a damaged archive
    expect(screen.getByRole('region', { name: 'Fixity' }).textContent).toContain('cannot be verified');
  });

  it('summarises the last verification and offers to run it again', () => {
    const onVerify = vi.fn();
    render(
      <ArchiveHealth state="ok" error={null} fixity={{ verified_at: '2026-03-01T10:00:00.000000Z', verified: 3, failed: 0 }} files={3} onVerify={onVerify} />,
    );
    const section = screen.getByRole('region', { name: 'Fixity' });
    expect(section.textContent).toContain('✓ All 3 files verified.');
    expect(section.textContent).toContain('Last verified');
    fireEvent.click(screen.getByRole('button', { name: 'Verify again' }));
    expect(onVerify).toHaveBeenCalled();
    cleanup();
    render(<ArchiveHealth state="ok" error={null} fixity={{ verified_at: '2026-03-01T10:00:00.000000Z', verified: 2, failed: 1 }} files={3} />);
    expect(screen.getByRole('region', { name: 'Fixity' }).textContent).toContain('✗ 2 verified, 1 failed fixity.');
    cleanup();
    render(<ArchiveHealth state="ok" error={null} fixity={{ verified_at: null, verified: 0, failed: 0 }} files={3} onVerify={vi.fn()} />);
    expect(screen.getByRole('region', { name: 'Fixity' }).textContent).toContain('Not verified yet.');
    expect(screen.getByRole('button', { name: 'Verify now' })).toBeTruthy();
  });
});

function verifyJob(report: Partial<NonNullable<Job['report']>>): Job {
  return {
    ...job('t1', 'succeeded'),
    kind: 'verify',
    target: 'offline',
    resource_id: 'arc1',
    report: { resources_created: [], resources_updated: [], resources_ignored: [], failed_fixity: [], file_errors: [], ...report },
  };
}

describe('verify jobs', () => {
  it('report counts files verified and files failing, and lists each failure', () => {
    render(
      <VerifyReport
        job={verifyJob({
          verified: ['a.csv', 'b.csv', 'c.csv'],
          unverified: [],
          failed_fixity: [
            { path: 'd.csv', algorithm: 'sha256', expected: '11', actual: '22' },
            { path: 'd.csv', algorithm: 'md5', expected: '33', actual: '44' },
            { path: 'e.csv', algorithm: 'read', expected: 'readable bytes', actual: 'invalid stored block lengths' },
          ],
        })}
      />,
    );
    expect(screen.getByText(/3 verified, 2 failed fixity\./)).toBeTruthy();
    const items = screen.getAllByRole('listitem');
    expect(items.map((li) => li.textContent)).toEqual([
      'd.csv: sha256 expected 11, got 22',
      'd.csv: md5 expected 33, got 44',
      'e.csv: could not be read (invalid stored block lengths)',
    ]);
  });

  it('an all-good verification is one line', () => {
    render(<VerifyReport job={verifyJob({ verified: ['a', 'b'] })} />);
    expect(screen.getByText('✓ 2 verified, 0 failed fixity.', { exact: false })).toBeTruthy();
    expect(screen.queryByRole('listitem')).toBeNull();
  });

  it('is labelled after the archive, even when another window started it', () => {
    const name = (t: string) => (t === 'offline' ? 'Downloaded ZIPs' : t);
    const j = verifyJob({});
    expect(jobLabel(j, undefined, name, () => 'project')).toBe('Verify project');
    expect(jobLabel(j, undefined, name, () => null)).toBe('Verify an archive in Downloaded ZIPs');
    expect(
      jobLabel(j, { kind: 'verify', label: 'Verify survey', destination: { target: 'offline', containerId: null, trail: [] }, duplicateAction: 'ignore' }, name, () => null),
    ).toBe('Verify survey');
  });
});
