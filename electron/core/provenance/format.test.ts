import { describe, expect, it } from 'vitest';
import { appendEntry, bagDownloadView, parseProvenance, serializeProvenance, type ProvenanceEntry } from './format.js';

// Bags downloaded before the common format carry `ferry_provenance_version: 1`; they must
// still be read, as one download entry, and extended like any other log.
const OLD_BAG = {
  ferry_provenance_version: 1,
  source_target: 'osf',
  resource_id: 'abc12',
  resource_title: 'Study',
  downloaded_at: '2025-01-02T03:04:05.000000Z',
  files: [
    { path: 'Study/a.csv', size: 3, source_hashes: { md5: 'aa' }, computed_hashes: { md5: 'aa', sha256: 'bb' }, fixity: 'ok' },
    { path: 'Study/b.csv', size: 3, source_hashes: {}, computed_hashes: { md5: 'cc', sha256: 'dd' }, fixity: 'no-source-hash' },
  ],
};

const transfer: ProvenanceEntry = {
  action: 'transfer',
  at: '2025-02-01T00:00:00.000000Z',
  job: 'ticket-1',
  software: 'Ferry',
  source: { target: 'zenodo', resource_id: '12', title: 'Study' },
  destination: { target: 'local', resource_id: 'l_x', title: 'Study' },
  files: [],
};

describe('parseProvenance', () => {
  it('reads the old bag format as one download entry, verified only where fixity was ok', () => {
    const log = parseProvenance(JSON.stringify(OLD_BAG));
    expect(log.format).toBe('ferry-provenance/1');
    expect(log.entries).toHaveLength(1);
    expect(log.entries[0]).toMatchObject({ action: 'download', at: OLD_BAG.downloaded_at, source: { target: 'osf', resource_id: 'abc12', title: 'Study' } });
    expect(log.entries[0]!.files.map((file) => file.verified)).toEqual([true, false]);
    expect(log.entries[0]!.files[1]!.verification).toMatch(/^Not verified/);
  });

  it('keeps earlier entries when one is appended, and reads its own output back', () => {
    const log = appendEntry(parseProvenance(JSON.stringify(OLD_BAG)), transfer);
    const again = parseProvenance(serializeProvenance(log).toString('utf8'));
    expect(again.entries.map((entry) => entry.action)).toEqual(['download', 'transfer']);
    expect(again).toEqual(log);
  });

  it('keeps the text of a file it cannot read instead of dropping it', () => {
    expect(parseProvenance('{"something": "else"}')).toEqual({ format: 'ferry-provenance/1', entries: [], unreadable_earlier_record: '{"something": "else"}' });
    expect(parseProvenance('not json').unreadable_earlier_record).toBe('not json');
  });
});

describe('bagDownloadView', () => {
  it('gives the offline library the same view of an old and a new bag file', () => {
    const fromOld = bagDownloadView(JSON.stringify(OLD_BAG));
    const fromNew = bagDownloadView(serializeProvenance(parseProvenance(JSON.stringify(OLD_BAG))).toString('utf8'));
    expect(fromOld).toMatchObject({ source_target: 'osf', resource_id: 'abc12', resource_title: 'Study', downloaded_at: OLD_BAG.downloaded_at });
    expect(fromNew).toEqual(fromOld);
    expect(bagDownloadView(JSON.stringify({ format: 'ferry-provenance/1', entries: [transfer] }))).toBeNull();
  });
});
