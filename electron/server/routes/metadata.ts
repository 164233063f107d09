// Descriptive metadata (extension, docs/api.md "Descriptive metadata"): what a resource says
// of itself, in Ferry's one model, so a person can review and edit it before a transfer
// (which takes the edited copy in its `metadata` field).
import type { FastifyInstance } from 'fastify';
import type { DescriptiveMetadata } from '../../../shared/api.js';
import { notSupported } from '../../core/errors.js';
import { clientGone, type ServerContext } from '../context.js';
import { errorResponses, ref, resourceParam, targetParam, tokenHeader } from '../schemas.js';
import { resolveTargetToken } from '../tokens.js';
import { requireAction } from './resources.js';

export function registerMetadataRoutes(app: FastifyInstance, { core }: ServerContext): void {
  app.get<{ Params: { target: string; resource: string } }>(
    '/api_v1/targets/:target/resources/:resource/metadata/',
    {
      schema: {
        summary: 'Descriptive metadata (extension): title, description, creators, keywords, licence … of a resource',
        description:
          "What the resource says of itself, read from the service (a dataset's citation block, an item's authors and " +
          "licence, a repository's topics and CITATION.cff, a folder's ro-crate-metadata.json or CITATION.cff), in " +
          "Ferry's one model. `{}` when it says nothing (a file, a plain folder). Send it back, edited, as `metadata` " +
          'in the body of a transfer to a new top-level resource. 405 for a target that cannot describe its resources.',
        tags: ['resources'],
        params: { type: 'object', required: ['target', 'resource'], properties: { target: targetParam, resource: resourceParam } },
        headers: { type: 'object', properties: { 'service-source-token': tokenHeader('source') } },
        response: { 200: ref('DescriptiveMetadata'), ...errorResponses(401, 403, 404, 405, 429, 502, 503) },
      },
    },
    async (request, reply) => {
      const target = core.targets.get(request.params.target);
      requireAction(target, 'resource_detail');
      if (!target.describe) throw notSupported(`${target.info.readable_name} resources carry no descriptive metadata Ferry can read.`);
      const token = await resolveTargetToken(core, target, request, 'source');
      const metadata: DescriptiveMetadata = (await target.describe({ token, signal: clientGone(request, reply) }, request.params.resource)) ?? {};
      return reply.send(metadata);
    },
  );
}
