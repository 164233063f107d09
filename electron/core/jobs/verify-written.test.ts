import { describe, expect, it } from 'vitest';
import type { StoredRecord, WriteOutcome } from '../target.js';
import type { SentFile } from './entry-stream.js';
import { verifyWritten } from './verify-written.js';

const MD5_A = '0cc175b9c0f1b6a831c399e269772661';

function outcomeOf(records: Record<string, StoredRecord | undefined>): WriteOutcome {
  const stored = new Map(Object.entries(records).filter((pair): pair is [string, StoredRecord] => pair[1] !== undefined));
  return { created: ['T', ...Object.keys(records)], updated: [], ignored: [], fileErrors: [], stored };
}

const sentAll = (sent: SentFile | undefined) => ({ isFile: (path: string) => path !== 'T', sent: () => sent });

describe('verifyWritten', () => {
  it('verifies a matching hash and size, and skips folders', () => {
    const result = verifyWritten(outcomeOf({ 'T/a': { hashes: { MD5: MD5_A.toUpperCase() }, size: 1 } }), sentAll({ bytes: 1, hashes: { md5: MD5_A } }), 'OSF');
    expect(result.failed).toEqual([]);
    expect(result.checks).toEqual([{ path: 'T/a', result: 'verified', detail: "OSF's md5 and size of the stored file matched the bytes sent." }]);
  });

  it('says so when the hashes are those of the bytes as written (a local file), not read back', () => {
    const record: StoredRecord = { hashes: { md5: MD5_A }, size: 1, hashedAsWritten: true };
    const result = verifyWritten(outcomeOf({ 'T/a': record }), sentAll({ bytes: 1, hashes: { md5: MD5_A } }), 'Local folders');
    expect(result.checks).toEqual([{ path: 'T/a', result: 'verified', detail: "Local folders: the stored file's size and the md5 of its bytes as written (not read back) matched the bytes sent." }]);
    // the size on disk is the stored file's own: a short file fails
    expect(verifyWritten(outcomeOf({ 'T/a': { ...record, size: 0 } }), sentAll({ bytes: 1, hashes: { md5: MD5_A } }), 'Local folders').failed).toMatchObject([{ path: 'T/a', stage: 'verify', algorithm: 'size', actual: '0' }]);
  });

  it('fails a file whose recorded size differs, even with no hash in common', () => {
    const result = verifyWritten(outcomeOf({ 'T/a': { hashes: {}, size: 2 } }), sentAll({ bytes: 1, hashes: { md5: MD5_A } }), 'WebDAV');
    expect(result.failed).toEqual([
      {
        path: 'T/a',
        stage: 'verify',
        error: "'T/a' was written, but WebDAV records 2 bytes for it where Ferry sent 1 byte; it is counted as failed. Upload it again.",
        algorithm: 'size',
        expected: '1',
        actual: '2',
      },
    ]);
  });

  it('says why a file is not verifiable: no record, a stated reason, no algorithm in common, bytes not seen', () => {
    const sent = { bytes: 1, hashes: { md5: MD5_A } };
    const cases: [StoredRecord | undefined, SentFile | undefined, string][] = [
      [undefined, sent, 'Not verifiable: figshare gave no record of the stored file (size or checksum) to check it against.'],
      [{ unverifiable: 'figshare computes it after upload.' }, sent, 'Not verifiable: figshare computes it after upload.'],
      [{ hashes: { sha1: 'ab' }, size: 1 }, sent, 'Not verifiable: figshare reports only sha1, which Ferry did not compute (its size, 1 byte, matched).'],
      [{ hashes: {}, size: null }, sent, 'Not verifiable: figshare reports no checksum of the stored file.'],
      [{ hashes: { md5: MD5_A }, size: 1 }, undefined, 'Not verifiable: the writer did not read its bytes to the end through the job, so Ferry has no digest of what was sent.'],
    ];
    for (const [record, seen, detail] of cases) {
      const result = verifyWritten(outcomeOf({ 'T/a': record }), sentAll(seen), 'figshare');
      expect(result.failed).toEqual([]);
      expect(result.checks).toEqual([{ path: 'T/a', result: 'not_verifiable', detail }]);
    }
  });
});
