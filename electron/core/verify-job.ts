import { emptyReport, type JobService } from './jobs/types.js';
import { notSupported } from './errors.js';
import { failedFilesOfVerify } from './jobs/outcome.js';
import type { TargetRegistry } from './registry.js';

export interface VerifyParams {
  resourceId: string;
}

/**
 * `verify` jobs: re-read stored bytes and check them against recorded hashes, for any
 * target that can (today the offline library). Failures land in the report's
 * failed_files (and failed_fixity), so a verification that found any does not succeed; the
 * target keeps the outcome so detail shows it.
 */
export function registerVerifyExecutor(jobs: JobService, deps: { targets: TargetRegistry; accessKey: string }): void {
  // A retry verifies the whole archive again: a target verifies archives, not single files.
  const verifyAgain = (_finished: unknown, params: Record<string, unknown>) => params;
  jobs.register('verify', async ({ job, params, tokens, signal, progress }) => {
    const target = deps.targets.get(job.target);
    if (!target.verify) throw notSupported(`${target.info.readable_name} has nothing to verify.`);
    const { resourceId } = params as unknown as VerifyParams;
    const token = tokens.source ?? (target.info.credential === 'access-key' ? deps.accessKey : '');
    const outcome = await target.verify({ token, signal }, resourceId, {
      signal,
      onProgress: (done, total) => progress({ files_done: done.files, bytes_done: done.bytes, files_total: total.files, bytes_total: total.bytes }),
    });
    return {
      ...emptyReport(),
      failed_fixity: outcome.failed,
      failed_files: failedFilesOfVerify(outcome.failed),
      verified: outcome.verified,
      unverified: outcome.unverified,
    };
  }, verifyAgain);
}
