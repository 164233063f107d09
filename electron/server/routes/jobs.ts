// Jobs (extension): one job for whoever started it, the list and a live event stream for
// the app (access key), cancel, pause and resume (a paused job, or a cancelled or failed
// transfer where it stopped), a retry of a finished job's failed files, and the queue: its
// order and settings (access key).
import type { ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ACKNOWLEDGEMENT_MESSAGE, isFinishedStatus, QUEUE_MOVES, type Acknowledgement, type Job, type QueueMove, type QueueSettings } from '../../../shared/api.js';
import type { FerryCore } from '../../core/ferry-core.js';
import { FerryError, forbidden, notFound, unauthorized } from '../../core/errors.js';
import type { ServerContext } from '../context.js';
import { errorResponses, ref } from '../schemas.js';
import { presentedTokens, requireAccessKey, resolveTargetToken } from '../tokens.js';
import { jobPath } from '../urls.js';

const HEARTBEAT_MS = 15_000;
/** The app needs one or two; a cap keeps a key holder's loop from exhausting sockets and memory. */
export const MAX_EVENT_STREAMS = 16;

type TicketRequest = FastifyRequest<{ Params: { ticket: string } }>;

/** The tokens a new run of `job` (retry, resume) needs, by role, from the request or the keychain. */
async function tokensToRunAgain(core: FerryCore, request: TicketRequest, job: Job): Promise<Record<string, string>> {
  const tokens: Record<string, string> = {};
  if (job.kind === 'verify') {
    tokens.source = await resolveTargetToken(core, core.targets.get(job.target), request, 'source');
  } else {
    tokens.destination = await resolveTargetToken(core, core.targets.get(job.target), request, 'destination');
    if (job.source) tokens.source = await resolveTargetToken(core, core.targets.get(job.source.target), request, 'source');
  }
  return tokens;
}

function acknowledged(reply: FastifyReply, job: Job): FastifyReply {
  const acknowledgement: Acknowledgement = { ticket_number: job.ticket_number, message: ACKNOWLEDGEMENT_MESSAGE };
  return reply.code(202).header('location', jobPath(job.ticket_number)).send(acknowledgement);
}

/** The job, if the request shows a token that started it (or the access key). */
export function accessibleJob(core: FerryCore, request: TicketRequest): Job {
  const ticket = request.params.ticket;
  const job = core.jobs.get(ticket);
  if (!job) throw notFound(`There is no job with ticket '${ticket.slice(0, 80)}'. Finished jobs are kept for a while, then removed.`, 'ticket_not_found');
  const tokens = presentedTokens(request);
  if (tokens.length === 0) {
    throw unauthorized(
      'Send the token that started the job in service-source-token or service-destination-token, or the access key as Authorization: Bearer.',
    );
  }
  if (!tokens.some((token) => core.jobs.mayAccess(ticket, token))) throw forbidden('This job was started with a different token.');
  return job;
}

const authHeaders = {
  type: 'object',
  properties: {
    'service-source-token': { type: 'string' },
    'service-destination-token': { type: 'string' },
    authorization: { type: 'string', description: 'Bearer <access key>' },
  },
};
const ticketParams = { type: 'object', required: ['ticket'], properties: { ticket: { type: 'string' } } };

export function registerJobRoutes(app: FastifyInstance, { core }: ServerContext): void {
  const streams = new Set<ServerResponse>();

  app.get(
    '/api_v1/jobs/',
    {
      schema: {
        summary: 'Every job, newest first (access key)',
        tags: ['jobs'],
        headers: authHeaders,
        response: { 200: { type: 'array', items: ref('Job') }, ...errorResponses(401) },
      },
    },
    async (request) => {
      requireAccessKey(core, request);
      return [...core.jobs.list()].sort((a, b) => (a.created < b.created ? 1 : a.created > b.created ? -1 : 0));
    },
  );

  app.get(
    '/api_v1/jobs/events/',
    {
      schema: {
        summary: 'Server-Sent Events of job changes (access key)',
        description: 'Each change is `event: job` with the Job as JSON in `data:`; a comment line every 15 s keeps the stream open.',
        tags: ['jobs'],
        headers: authHeaders,
        response: {
          200: { description: 'text/event-stream', content: { 'text/event-stream': { schema: { type: 'string' } } } },
          ...errorResponses(401, 429),
        },
      },
    },
    async (request, reply) => {
      requireAccessKey(core, request);
      if (streams.size >= MAX_EVENT_STREAMS) {
        throw new FerryError(429, 'rate_limited', `${MAX_EVENT_STREAMS} job event streams are already open; close one (or reuse it) first.`, 5);
      }
      reply.hijack();
      // the heartbeat keeps it busy; the idle-socket timeout is for connections doing nothing
      request.raw.socket.setTimeout(0);
      const res = reply.raw;
      res.writeHead(200, {
        ...(reply.getHeaders() as Record<string, string>),
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      res.write('retry: 3000\n: connected\n\n');
      streams.add(res);
      const unsubscribe = core.jobs.subscribe((job) => {
        res.write(`event: job\ndata: ${JSON.stringify(job)}\n\n`);
      });
      const heartbeat = setInterval(() => res.write(': heartbeat\n\n'), HEARTBEAT_MS);
      res.once('close', () => {
        clearInterval(heartbeat);
        unsubscribe();
        streams.delete(res);
      });
    },
  );

  // open event streams would keep close() waiting forever
  app.addHook('preClose', async () => {
    for (const res of streams) res.end();
  });

  app.get<{ Params: { ticket: string } }>(
    '/api_v1/jobs/:ticket/',
    {
      schema: {
        summary: 'One job (the token that started it, or the access key)',
        tags: ['jobs'],
        params: ticketParams,
        headers: authHeaders,
        response: { 200: ref('Job'), ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => accessibleJob(core, request),
  );

  app.post<{ Params: { ticket: string } }>(
    '/api_v1/jobs/:ticket/retry/',
    {
      schema: {
        summary: "Retry a finished job's failed files only (the token that started it, or the access key)",
        description:
          'A new job of the same kind limited to report.failed_files: a transfer reads the same source again and writes ' +
          'only those files (into the resource a top-level transfer made); a verification checks the archive again. ' +
          'The new job carries retry_of. It needs the tokens the original needed (service-source-token, ' +
          'service-destination-token, or the access key for the stored ones). 409 when the job has not finished or has ' +
          'no failed file; 405 when its kind cannot be retried file by file (an upload: its ZIP is not kept).',
        tags: ['jobs'],
        params: ticketParams,
        headers: authHeaders,
        response: { 202: ref('Acknowledgement'), ...errorResponses(401, 403, 404, 405, 409) },
      },
    },
    async (request, reply) => {
      const job = accessibleJob(core, request);
      const retry = await core.jobs.retry(job.ticket_number, await tokensToRunAgain(core, request, job));
      return acknowledged(reply, retry);
    },
  );

  app.delete(
    '/api_v1/jobs/',
    {
      schema: {
        summary: 'Clear finished jobs (access key)',
        description: 'Removes every finished job now, as pruning would later. Waiting, running and paused jobs stay.',
        tags: ['jobs'],
        headers: authHeaders,
        response: {
          200: { type: 'object', required: ['removed'], properties: { removed: { type: 'integer' } } },
          ...errorResponses(401),
        },
      },
    },
    async (request) => {
      requireAccessKey(core, request);
      return { removed: await core.jobs.clearFinished() };
    },
  );

  app.post<{ Params: { ticket: string } }>(
    '/api_v1/jobs/:ticket/pause/',
    {
      schema: {
        summary: 'Pause a job (the token that started it, or the access key)',
        description:
          'A waiting job stays out of the queue; a running one stops and keeps what it did (status paused). ' +
          'POST …/resume/ continues it from there; DELETE cancels it. 409 when the job has finished.',
        tags: ['jobs'],
        params: ticketParams,
        headers: authHeaders,
        response: { 200: ref('Job'), ...errorResponses(401, 403, 404, 409) },
      },
    },
    async (request) => core.jobs.pause(accessibleJob(core, request).ticket_number),
  );

  app.post<{ Params: { ticket: string } }>(
    '/api_v1/jobs/:ticket/resume/',
    {
      schema: {
        summary: 'Resume a paused job, or a cancelled or failed transfer where it stopped (the token that started it, or the access key)',
        description:
          'A paused job goes first in the queue and continues, under its own ticket, as a resumed run. A cancelled or ' +
          'failed transfer goes on as a new job with the same parameters that does not send again the files the earlier ' +
          'job completed (its resume journal: a file counts once the destination confirmed it, and only while the source ' +
          'file has the same size and hash or modification time); a top-level transfer goes on in the resource it made. ' +
          'That new job carries resumed.from and resumed.files_already_done, and its report lists the files left out in ' +
          'already_done; it needs the tokens the original needed, as for retry/. The answer names the job that goes on. A ' +
          'job waiting or running is answered as it is. A job that was running when Ferry stopped or crashed needs no ' +
          'request: it resumes by itself when Ferry starts. 409 when the job succeeded; 405 for an upload that has ended ' +
          '(its ZIP is not kept).',
        tags: ['jobs'],
        params: ticketParams,
        headers: authHeaders,
        response: { 202: ref('Acknowledgement'), ...errorResponses(401, 403, 404, 405, 409) },
      },
    },
    async (request, reply) => {
      const job = accessibleJob(core, request);
      const goingOn = isFinishedStatus(job.status)
        ? await core.jobs.resumeFinished(job.ticket_number, await tokensToRunAgain(core, request, job))
        : await core.jobs.resume(job.ticket_number);
      return acknowledged(reply, goingOn);
    },
  );

  app.post<{ Params: { ticket: string }; Body: { to: QueueMove } }>(
    '/api_v1/jobs/:ticket/move/',
    {
      schema: {
        summary: 'Move a waiting job in the queue (access key)',
        description: 'to: first, up, down or last. Answers the queue as it now stands; 409 when the job is not waiting.',
        tags: ['jobs'],
        params: ticketParams,
        headers: authHeaders,
        body: { type: 'object', required: ['to'], additionalProperties: false, properties: { to: { type: 'string', enum: [...QUEUE_MOVES] } } },
        response: { 200: ref('QueueState'), ...errorResponses(400, 401, 404, 409) },
      },
    },
    async (request) => {
      requireAccessKey(core, request);
      return core.jobs.move(request.params.ticket, request.body.to);
    },
  );

  app.get(
    '/api_v1/queue/',
    {
      schema: {
        summary: 'The job queue: its settings and the waiting jobs in order (access key)',
        tags: ['jobs'],
        headers: authHeaders,
        response: { 200: ref('QueueState'), ...errorResponses(401) },
      },
    },
    async (request) => {
      requireAccessKey(core, request);
      return core.jobs.queueState();
    },
  );

  app.put<{ Body: Partial<QueueSettings> }>(
    '/api_v1/queue/',
    {
      schema: {
        summary: "Change the queue's settings (access key)",
        description:
          'Any of concurrency (1–16 jobs at once), per_target ({target: jobs}, replacing the whole map) and bandwidth_limit ' +
          '(bytes a second all running jobs read together, at least 1024; null: no limit). Saved across restarts. A lower ' +
          'concurrency lets running jobs finish; a bandwidth limit applies from the next file each job reads.',
        tags: ['jobs'],
        headers: authHeaders,
        body: {
          type: 'object',
          additionalProperties: false,
          properties: {
            concurrency: { type: 'integer' },
            per_target: { type: 'object', additionalProperties: { type: 'integer' } },
            bandwidth_limit: { type: ['integer', 'null'] },
          },
        },
        response: { 200: ref('QueueState'), ...errorResponses(400, 401) },
      },
    },
    async (request) => {
      requireAccessKey(core, request);
      return core.jobs.configureQueue(request.body ?? {});
    },
  );

  app.delete<{ Params: { ticket: string } }>(
    '/api_v1/jobs/:ticket/',
    {
      schema: {
        summary: 'Cancel a job (409 when already finished); a paused job ends cancelled with what it changed',
        tags: ['jobs'],
        params: ticketParams,
        headers: authHeaders,
        response: { 200: ref('Job'), ...errorResponses(401, 403, 404, 409) },
      },
    },
    async (request) => {
      const job = accessibleJob(core, request);
      return core.jobs.cancel(job.ticket_number);
    },
  );
}
