// Duplicates preview (extension): before a transfer or an upload into a folder starts, which
// of its files the folder already holds, with both sides' size, modification time and hashes
// side by side, so a person can choose per file (the transfer's duplicate_choices). Answered
// at once (200), not as a job: it reads no bytes, only listings and what each side reports.
import type { FastifyInstance } from 'fastify';
import { MAX_RESOURCES_PER_REQUEST, type ConflictsRequest } from '../../../shared/api.js';
import { badRequest } from '../../core/errors.js';
import { previewWrite, type DescribedFile } from '../../core/jobs/conflicts-preview.js';
import { clientGone, type ServerContext } from '../context.js';
import { errorResponses, ref, resourceParam, targetParam, tokenHeader } from '../schemas.js';
import { resolveTargetToken } from '../tokens.js';
import { requireAction } from './resources.js';
import { requireContainer, requireSource, sourceIdsOf } from './uploads.js';

type ConflictsBody = Partial<ConflictsRequest> & { files?: DescribedFile[] };

const bodySchema = {
  type: 'object',
  description:
    'What would be written: a transfer’s source fields (`source_target_name` and `source_resource_id` or `source_resource_ids`), ' +
    'or, for an upload, its `files` as the ZIP will hold them (paths relative to the folder, with size, modification time and hashes where known).',
  additionalProperties: false,
  properties: {
    source_target_name: { type: 'string', minLength: 1 },
    source_resource_id: { type: 'string', minLength: 1 },
    source_resource_ids: { type: 'array', minItems: 1, maxItems: MAX_RESOURCES_PER_REQUEST, items: { type: 'string', minLength: 1 } },
    files: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_RESOURCES_PER_REQUEST,
      items: {
        type: 'object',
        required: ['path'],
        additionalProperties: false,
        properties: {
          path: { type: 'string', minLength: 1 },
          size: { type: ['integer', 'null'], minimum: 0 },
          date_modified: { type: ['string', 'null'] },
          hashes: {
            type: 'object',
            description: 'what the client could hash cheaply, by algorithm (lowercase, as a target names it: sha256), lowercase hex; shown beside the stored file’s',
            maxProperties: 4,
            propertyNames: { pattern: '^[a-z0-9-]{2,16}$' },
            additionalProperties: { type: 'string', pattern: '^[0-9a-f]{8,128}$' },
          },
        },
      },
    },
  },
} as const;

export function registerConflictRoutes(app: FastifyInstance, { core }: ServerContext): void {
  app.post<{ Params: { target: string; resource: string }; Body: ConflictsBody }>(
    '/api_v1/targets/:target/resources/:resource/conflicts/',
    {
      schema: {
        summary: 'Duplicates preview (extension): which files of a transfer or upload into this folder are already there',
        description:
          'Plans the write as the job would (the same 400 for the same bad input) and lists each planned file the folder ' +
          'already holds, with both sides’ size, modification time and the hashes each reports. Reads no bytes. Send the ' +
          'choices back with the transfer as duplicate_choices.',
        tags: ['uploads'],
        params: { type: 'object', required: ['target', 'resource'], properties: { target: targetParam, resource: resourceParam } },
        headers: {
          type: 'object',
          properties: {
            'service-source-token': { ...tokenHeader('source'), description: 'a transfer’s: the source target’s token' },
            'service-destination-token': { ...tokenHeader('destination'), description: 'this (the destination) target’s token' },
          },
        },
        body: bodySchema,
        response: { 200: ref('ConflictsReport'), ...errorResponses(400, 401, 403, 404, 405, 415, 429, 502, 503) },
      },
    },
    async (request, reply) => {
      const destination = core.targets.get(request.params.target);
      requireAction(destination, 'resource_upload');
      const containerId = request.params.resource;
      const signal = clientGone(request, reply);
      const body = request.body;
      if ((body.files === undefined) === (body.source_target_name === undefined)) {
        throw badRequest('Describe what would be written as a transfer’s source (source_target_name with source_resource_id or source_resource_ids) or as an upload’s files, not both or neither.');
      }
      const destinationCtx = { token: await resolveTargetToken(core, destination, request, 'destination'), signal };
      await requireContainer(destination, destinationCtx, containerId);
      if (body.files) return previewWrite(destination, destinationCtx, containerId, { files: body.files });
      const source = core.targets.get(body.source_target_name!);
      requireAction(source, 'resource_download');
      const ids = sourceIdsOf(body as ConflictsRequest, containerId);
      const sourceCtx = { token: await resolveTargetToken(core, source, request, 'source'), signal };
      if (ids.length === 1) await requireSource(source, sourceCtx, ids[0]!);
      return previewWrite(destination, destinationCtx, containerId, { source, ctx: sourceCtx, ids });
    },
  );
}
