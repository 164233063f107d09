// 4.1 and the single-target views: what each target is and can do.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TargetDescription } from '../../../shared/api.js';
import { supportedOperations } from '../../core/operations/supported.js';
import type { Target } from '../../core/target.js';
import type { ServerContext } from '../context.js';
import { errorResponses, ref, targetParam } from '../schemas.js';
import { baseUrl, targetUrl } from '../urls.js';
import { folderModesOf } from './uploads.js';

export function describeTarget(target: Target, base: string): TargetDescription {
  const { name, readable_name, supported_actions, supported_hash_algorithms } = target.info;
  return {
    name,
    readable_name,
    supported_actions: { ...supported_actions },
    supported_hash_algorithms: [...supported_hash_algorithms],
    detail: targetUrl(base, name),
    supported_operations: supportedOperations(target),
    // declared by the optional method itself (target.ts), so the flag and the route cannot disagree
    capabilities: { search: typeof target.search === 'function', folder_modes: [...folderModesOf(target)] },
    keeps_metadata: target.info.keepsMetadata === true,
  };
}

export function registerTargetRoutes(app: FastifyInstance, { core }: ServerContext): void {
  // One serialized list per base URL, so the most frequent request (every client starts
  // with it) costs no serialization; dropped when the registry's generation moves (a local
  // folder added or removed).
  const serialized = new Map<string, string>();
  let generation = core.targets.generation;
  app.get(
    '/api_v1/targets/',
    {
      schema: {
        summary: 'List the targets (4.1)',
        tags: ['targets'],
        response: { 200: { type: 'array', items: ref('Target') } },
      },
    },
    (request, reply) => {
      const base = baseUrl(request);
      if (generation !== core.targets.generation) {
        serialized.clear();
        generation = core.targets.generation;
      }
      let body = serialized.get(base);
      if (body === undefined) {
        body = JSON.stringify(core.targets.all().map((target) => describeTarget(target, base)));
        if (serialized.size < 8) serialized.set(base, body);
      }
      return reply.type('application/json; charset=utf-8').send(body);
    },
  );

  const one = async (request: FastifyRequest<{ Params: { target: string } }>) =>
    describeTarget(core.targets.get(request.params.target), baseUrl(request));
  const oneSchema = (summary: string) => ({
    schema: {
      summary,
      tags: ['targets'],
      params: { type: 'object', required: ['target'], properties: { target: targetParam } },
      response: { 200: ref('Target'), ...errorResponses(404) },
    },
  });
  app.get('/api_v1/target/:target/', oneSchema("One target (the Target's detail link)"), one);
  app.get('/api_v1/targets/:target/', oneSchema('One target'), one);
}
