// The job queue as the core has it (GET /api_v1/queue/): its settings and the order of the
// waiting jobs. The core is the truth: every change answers the new state, and job events
// that move a job in or out of waiting read it again. Each action answers null, or the
// sentence saying why it did not happen.
import { createStore } from 'zustand/vanilla';
import type { QueueMove, QueueSettings, QueueState } from '../../../shared/api.js';
import { ApiRequestError, messageOf, type ApiClient } from '../api/client.js';
import type { JobsStore } from './jobs.js';

type QueueApi = Pick<ApiClient, 'queue' | 'configureQueue' | 'moveJob' | 'pauseJob' | 'resumeJob' | 'job' | 'clearFinishedJobs'>;

export interface QueueStoreState {
  queue: QueueState | null;
}

const ALREADY_FINISHED = 'The job had already finished.';

export function createQueueStore(api: QueueApi, jobs: JobsStore) {
  const store = createStore<QueueStoreState>()(() => ({ queue: null }));

  async function attempt(run: () => Promise<void>): Promise<string | null> {
    try {
      await run();
      return null;
    } catch (error) {
      if (error instanceof ApiRequestError && error.status === 409) return error.message || ALREADY_FINISHED;
      return messageOf(error);
    }
  }

  const load = async (): Promise<void> => {
    try {
      store.setState({ queue: await api.queue() });
    } catch {
      /* the list of jobs still works; the next change tries again */
    }
  };

  // a job entering or leaving the waiting line changes the order shown
  jobs.onChange((next, previous) => {
    if ((previous?.job.status === 'queued') !== (next.job.status === 'queued')) void load();
  });

  return {
    store,
    load,
    pause: (ticket: string) => attempt(async () => jobs.event(await api.pauseJob(ticket))),
    // a paused job goes on under its own ticket (the answer names it)
    resume: (ticket: string) => attempt(async () => jobs.event(await api.job((await api.resumeJob(ticket)).ticket_number))),
    move: (ticket: string, to: QueueMove) => attempt(async () => store.setState({ queue: await api.moveJob(ticket, to) })),
    configure: (settings: Partial<QueueSettings>) => attempt(async () => store.setState({ queue: await api.configureQueue(settings) })),
    /** removes finished jobs on the server and from the list; null, or why not */
    clearFinished: () =>
      attempt(async () => {
        await api.clearFinishedJobs();
        jobs.forgetFinished();
      }),
  };
}

export type QueueStore = ReturnType<typeof createQueueStore>;
