import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { isFinishedStatus, type Job } from '../shared/api.js';
import type { FerryProcess } from '../test/support/ferry-process.js';
import { IDLE_DELAY_MS } from '../electron/core/idle-collection.js';

/**
 * A server's job events (GET /api_v1/jobs/events/), as the app follows its jobs: the moment a
 * job ends is seen without asking for it every few milliseconds, a load the app does not put
 * on the server (and on rclone beside it) either.
 */
export class JobEvents {
  private static readonly byServer = new WeakMap<FerryProcess, Promise<JobEvents>>();
  private readonly ended = new Map<string, Job>();
  private readonly waiting = new Map<string, (job: Job) => void>();

  /**
   * The server's events, opened at the first call and kept for the server's life: the rows
   * that time a job from its POST to its end see the end as the app does. (Asked for every
   * 10 ms, the answers cost a local → local transfer a sixth of the server's main thread in a
   * CPU profile, on the cores the reference tools get whole: docs/performance.md.)
   */
  static of(server: FerryProcess): Promise<JobEvents> {
    let events = JobEvents.byServer.get(server);
    if (!events) JobEvents.byServer.set(server, (events = JobEvents.open(server)));
    return events;
  }

  private static async open(server: FerryProcess): Promise<JobEvents> {
    const events = new JobEvents();
    const response = await fetch(new URL('api_v1/jobs/events/', server.url), { headers: { authorization: `Bearer ${server.accessKey}` } });
    if (response.status !== 200 || !response.body) throw new Error(`job events: HTTP ${response.status}`);
    void events.read(response.body as unknown as WebReadableStream<Uint8Array>).catch(() => undefined);
    return events;
  }

  /** the job `ticket` once it has ended */
  end(ticket: string): Promise<Job> {
    const job = this.ended.get(ticket);
    return job ? Promise.resolve(job) : new Promise((resolve) => this.waiting.set(ticket, resolve));
  }

  private async read(body: WebReadableStream<Uint8Array>): Promise<void> {
    let text = '';
    for await (const chunk of body.pipeThrough(new TextDecoderStream())) {
      text += chunk;
      for (let end = text.indexOf('\n\n'); end >= 0; end = text.indexOf('\n\n')) {
        const data = text.slice(0, end).split('\n').find((line) => line.startsWith('data: '));
        text = text.slice(end + 2);
        if (!data) continue;
        const job = JSON.parse(data.slice('data: '.length)) as Job;
        if (!isFinishedStatus(job.status)) continue;
        this.ended.set(job.ticket_number, job);
        this.waiting.get(job.ticket_number)?.(job);
      }
    }
  }
}


/**
 * Waits out the server's collection after its queue falls idle (electron/core/idle-collection.ts):
 * a row times the reference tool right after Ferry's job, and on 2 cores a full collection of
 * the server's heap (~30–60 ms of CPU) inside the reference's run would be charged to it. On a
 * person's machine the idle time between transfers absorbs it.
 */
export function afterIdleCollection(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, IDLE_DELAY_MS + 200));
}
