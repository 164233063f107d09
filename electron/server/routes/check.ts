// Check (extension): compare a source resource with a destination resource as a job, like
// `rclone check`; 202 with a ticket, like a transfer, with the same token headers. Both
// resources are looked up before the 202, so a wrong id is a 404, not a failed job.
import type { FastifyInstance } from 'fastify';
import type { Acknowledgement, CheckRequest } from '../../../shared/api.js';
import { ACKNOWLEDGEMENT_MESSAGE } from '../../../shared/api.js';
import { clientGone, type ServerContext } from '../context.js';
import { errorResponses, ref, resourceParam, targetParam, tokenHeader } from '../schemas.js';
import { resolveTargetToken } from '../tokens.js';
import { jobPath } from '../urls.js';
import { requireAction } from './resources.js';
import { requireSource } from './uploads.js';

const bodySchema = {
  type: 'object',
  description:
    'The source resource to compare the destination resource (the path’s) with: the same shape, e.g. a folder and the ' +
    'folder a transfer made of it. `read_bytes` computes digests from the bytes of files the two targets give no ' +
    'common hash for (otherwise those are compared by size only).',
  required: ['source_target_name', 'source_resource_id'],
  additionalProperties: false,
  properties: {
    source_target_name: { type: 'string', minLength: 1 },
    source_resource_id: { type: 'string', minLength: 1 },
    read_bytes: { type: 'boolean', default: false },
  },
} as const;

export function registerCheckRoutes(app: FastifyInstance, { core }: ServerContext): void {
  app.post<{ Params: { target: string; resource: string }; Body: CheckRequest }>(
    '/api_v1/targets/:target/resources/:resource/check/',
    {
      schema: {
        summary: 'Check (extension): compare a source resource with this one, by hash where both give one, else by size',
        description:
          'Answers 202 with a ticket; the job (kind `check`) writes nothing. Its report.check lists files missing ' +
          '(in the source only), extra (in the destination only) and different (with the algorithm and both digests, ' +
          'or both sizes), and how many were compared by hash and by size. A check that found any difference, or a ' +
          'file it could not compare, ends completed_with_errors; one that could not read a side ends failed.',
        tags: ['jobs'],
        params: { type: 'object', required: ['target', 'resource'], properties: { target: targetParam, resource: resourceParam } },
        headers: {
          type: 'object',
          properties: {
            'service-source-token': { ...tokenHeader('source'), description: 'the source target’s token' },
            'service-destination-token': { ...tokenHeader('destination'), description: 'this (the destination) target’s token' },
          },
        },
        body: bodySchema,
        response: { 202: ref('Acknowledgement'), ...errorResponses(400, 401, 403, 404, 405, 415, 429, 502, 503) },
      },
    },
    async (request, reply) => {
      const destination = core.targets.get(request.params.target);
      const source = core.targets.get(request.body.source_target_name);
      requireAction(destination, 'resource_download');
      requireAction(source, 'resource_download');
      const sourceToken = await resolveTargetToken(core, source, request, 'source');
      const destinationToken = await resolveTargetToken(core, destination, request, 'destination');
      const signal = clientGone(request, reply);
      const destinationId = request.params.resource;
      const sourceId = request.body.source_resource_id;
      // both looked up as a transfer's source is: described by read, nothing opened or hashed
      await requireSource(source, { token: sourceToken, signal }, sourceId);
      await requireSource(destination, { token: destinationToken, signal }, destinationId);
      const job = await core.jobs.submit({
        kind: 'check',
        target: destination.info.name,
        resource_id: destinationId,
        source: { target: source.info.name, resource_id: sourceId },
        params: { source: { target: source.info.name, resourceId: sourceId }, destinationId, readBytes: request.body.read_bytes === true },
        tokens: { source: sourceToken, destination: destinationToken },
      });
      const acknowledgement: Acknowledgement = { ticket_number: job.ticket_number, message: ACKNOWLEDGEMENT_MESSAGE };
      return reply.code(202).header('location', jobPath(job.ticket_number)).send(acknowledgement);
    },
  );
}
