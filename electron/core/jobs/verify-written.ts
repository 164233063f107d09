import type { FailedFile, WrittenCheck } from '../../../shared/api.js';
import type { StoredRecord, WriteOutcome } from '../target.js';
import type { SentFile } from './entry-stream.js';

/**
 * Verify after write, one rule for every target (issue #18): each file a write created or
 * updated is compared with the destination's own record of it (WriteOutcome.stored: the
 * hashes and size the service reports for the stored file), against the bytes the job sent.
 * - a size or hash that differs makes the file failed (stage `verify`), never written;
 * - a record whose hashes include one Ferry computed of the bytes sent, all alike (and the size,
 *   where given), verifies it;
 * - anything else (no record, the service computes none, no algorithm in common, bytes Ferry
 *   did not see) is `not_verifiable`, with the reason: never counted as verified.
 */
export interface WrittenVerification {
  checks: WrittenCheck[];
  /** the files whose check failed (paths as the writer named them) */
  failed: FailedFile[];
}

/** What the job saw pass to the writer (jobs/entry-stream.ts WatchedEntries). */
export interface SentFiles {
  isFile(path: string): boolean;
  sent(path: string): SentFile | undefined;
}

export function verifyWritten(outcome: WriteOutcome, files: SentFiles, service: string): WrittenVerification {
  const checks: WrittenCheck[] = [];
  const failed: FailedFile[] = [];
  for (const path of [...outcome.created, ...outcome.updated]) {
    if (!files.isFile(path)) continue; // a folder has nothing to check
    const check = checkOne(path, outcome.stored?.get(path), files.sent(path), service);
    checks.push({ path, result: check.result, detail: check.detail });
    if (check.result === 'failed') failed.push({ path, stage: 'verify', error: check.detail, ...check.mismatch });
  }
  return { checks, failed };
}

interface Check {
  result: WrittenCheck['result'];
  detail: string;
  mismatch?: { algorithm: string; expected: string; actual: string };
}

function checkOne(path: string, record: StoredRecord | undefined, sent: SentFile | undefined, service: string): Check {
  if (!record) return notVerifiable(`${service} gave no record of the stored file (size or checksum) to check it against.`);
  if ('unverifiable' in record) return notVerifiable(record.unverifiable);
  if (!sent) return notVerifiable('the writer did not read its bytes to the end through the job, so Ferry has no digest of what was sent.');
  if (record.size !== null && record.size !== sent.bytes) {
    return {
      result: 'failed',
      detail: `'${path}' was written, but ${service} records ${bytes(record.size)} for it where Ferry sent ${bytes(sent.bytes)}; it is counted as failed. Upload it again.`,
      mismatch: { algorithm: 'size', expected: String(sent.bytes), actual: String(record.size) },
    };
  }
  const stored = Object.entries(record.hashes).map(([algorithm, value]) => [algorithm.toLowerCase(), value.toLowerCase()] as const);
  const common = stored.filter(([algorithm]) => sent.hashes[algorithm] !== undefined);
  const differ = common.find(([algorithm, value]) => sent.hashes[algorithm] !== value);
  if (differ) {
    const [algorithm, value] = differ;
    return {
      result: 'failed',
      detail: `'${path}' was written, but ${service} records ${algorithm} ${value} for it where the bytes Ferry sent have ${sent.hashes[algorithm]}; it is counted as failed. Upload it again.`,
      mismatch: { algorithm, expected: sent.hashes[algorithm]!, actual: value },
    };
  }
  if (common.length === 0) {
    const sizeNote = record.size !== null ? ` (its size, ${bytes(record.size)}, matched)` : '';
    const what = stored.length === 0 ? `${service} reports no checksum of the stored file` : `${service} reports only ${stored.map(([a]) => a).join(', ')}, which Ferry did not compute`;
    return notVerifiable(`${what}${sizeNote}.`);
  }
  const algorithms = common.map(([a]) => a).join(' and ');
  if (record.hashedAsWritten) {
    const size = record.size !== null ? "the stored file's size and " : '';
    return { result: 'verified', detail: `${service}: ${size}the ${algorithms} of its bytes as written (not read back) matched the bytes sent.` };
  }
  const size = record.size !== null ? ' and size' : '';
  return { result: 'verified', detail: `${service}'s ${algorithms}${size} of the stored file matched the bytes sent.` };
}

function notVerifiable(why: string): Check {
  return { result: 'not_verifiable', detail: `Not verifiable: ${why}` };
}

const bytes = (n: number) => (n === 1 ? '1 byte' : `${n} bytes`);
