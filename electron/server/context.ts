// What every route module gets, and small helpers they share.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FerryCore } from '../core/ferry-core.js';

export interface ServerContext {
  core: FerryCore;
  version: string;
}

/**
 * An AbortSignal that fires when the client goes away before the response is complete,
 * so a listing, a detail call or a download stops working for nobody.
 */
export function clientGone(_request: FastifyRequest, reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  const onClose = () => {
    if (!reply.raw.writableFinished) controller.abort();
  };
  reply.raw.once('close', onClose);
  return controller.signal;
}
