// Verify (extension): re-check stored bytes against recorded hashes as a job, for targets
// that can (the offline library). 202 with a ticket, like an upload.
import type { FastifyInstance } from 'fastify';
import type { Acknowledgement } from '../../../shared/api.js';
import { ACKNOWLEDGEMENT_MESSAGE } from '../../../shared/api.js';
import { notSupported } from '../../core/errors.js';
import { clientGone, type ServerContext } from '../context.js';
import { errorResponses, ref, resourceParam, targetParam, tokenHeader } from '../schemas.js';
import { resolveTargetToken } from '../tokens.js';
import { jobPath } from '../urls.js';

export function registerVerifyRoutes(app: FastifyInstance, { core }: ServerContext): void {
  app.post<{ Params: { target: string; resource: string } }>(
    '/api_v1/targets/:target/resources/:resource/verify/',
    {
      schema: {
        summary: 'Verify a stored resource (extension): every file re-read and checked against its recorded hashes',
        description: 'Answers 202 with a ticket; the job report lists verified files and fixity failures, and detail shows each file’s state afterwards.',
        tags: ['jobs'],
        params: { type: 'object', required: ['target', 'resource'], properties: { target: targetParam, resource: resourceParam } },
        headers: { type: 'object', properties: { 'service-source-token': tokenHeader('source') } },
        response: { 202: ref('Acknowledgement'), ...errorResponses(400, 401, 403, 404, 405, 415) },
      },
    },
    async (request, reply) => {
      const target = core.targets.get(request.params.target);
      if (!target.verify) throw notSupported(`${target.info.readable_name} cannot verify stored bytes; only Downloaded ZIPs can.`);
      const id = request.params.resource;
      const token = await resolveTargetToken(core, target, request, 'source');
      await target.detail({ token, signal: clientGone(request, reply) }, id);
      const job = await core.jobs.submit({ kind: 'verify', target: target.info.name, resource_id: id, params: { resourceId: id }, tokens: { source: token } });
      const acknowledgement: Acknowledgement = { ticket_number: job.ticket_number, message: ACKNOWLEDGEMENT_MESSAGE };
      return reply.code(202).header('location', jobPath(job.ticket_number)).send(acknowledgement);
    },
  );
}
