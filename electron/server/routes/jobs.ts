// Jobs (extension): one job for whoever started it, the list and a live event stream for
// the app (access key), and cancel.
import type { ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Job } from '../../../shared/api.js';
import type { FerryCore } from '../../core/ferry-core.js';
import { FerryError, forbidden, notFound, unauthorized } from '../../core/errors.js';
import type { ServerContext } from '../context.js';
import { errorResponses, ref } from '../schemas.js';
import { presentedTokens, requireAccessKey } from '../tokens.js';

const HEARTBEAT_MS = 15_000;
/** The app needs one or two; a cap keeps a key holder's loop from exhausting sockets and memory. */
export const MAX_EVENT_STREAMS = 16;

type TicketRequest = FastifyRequest<{ Params: { ticket: string } }>;

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

  app.delete<{ Params: { ticket: string } }>(
    '/api_v1/jobs/:ticket/',
    {
      schema: {
        summary: 'Cancel a job (409 when already finished)',
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
