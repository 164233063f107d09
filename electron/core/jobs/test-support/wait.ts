import type { JobStatus } from '../../../../shared/api.js';
import type { JobService } from '../types.js';

/** Polls until `check` answers something truthy (returned), or fails after `timeoutMs`. */
export async function waitFor<T>(check: () => T | undefined | false, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** The job, once it has `status`. */
export const waitStatus = (service: JobService, ticket: string, status: JobStatus) =>
  waitFor(() => service.get(ticket)?.status === status && service.get(ticket));
