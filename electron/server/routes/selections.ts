// A selection downloaded as one bag (extension). POST names the resources and answers a
// short-lived download path; GET on it streams one BagIt ZIP whose payload holds each
// resource under its own title (data/<title>/…), as a single download holds one. Two steps
// because a download must be a plain GET (the app's save dialog, a browser download) while
// thousands of ids do not fit a URL. Selections live in memory for SELECTION_TTL_MS: they
// name ids, never bytes or tokens, and a restart simply forgets them.
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { MAX_RESOURCES_PER_REQUEST } from '../../../shared/api.js';
import { notFound } from '../../core/errors.js';
import type { Entry, ReadResult, Target, TargetContext } from '../../core/target.js';
import { teeIntoLibrary } from '../../core/download-library.js';
import { bagNameFor, writeBagZip } from '../../core/bag/bag-writer.js';
import { clientGone, type ServerContext } from '../context.js';
import { errorResponses, targetParam, tokenHeader } from '../schemas.js';
import { resolveTargetToken } from '../tokens.js';
import { attachmentDisposition, requireAction } from './resources.js';

const SELECTION_TTL_MS = 10 * 60_000;
/** enough for any person's open downloads; the oldest goes first past it */
const MAX_SELECTIONS = 64;

interface Selection {
  target: string;
  ids: string[];
  created: number;
}

export function registerSelectionRoutes(app: FastifyInstance, { core }: ServerContext): void {
  const selections = new Map<string, Selection>();
  const sourceHeaders = { type: 'object', properties: { 'service-source-token': tokenHeader('source') } };

  const forget = (now: number) => {
    for (const [key, selection] of selections) if (now - selection.created > SELECTION_TTL_MS) selections.delete(key);
    while (selections.size >= MAX_SELECTIONS) selections.delete(selections.keys().next().value!);
  };

  app.post<{ Params: { target: string }; Body: { resource_ids: string[] } }>(
    '/api_v1/targets/:target/selections/',
    {
      schema: {
        summary: 'Name a selection to download as one bag (extension)',
        description:
          'Answers `{download}`: a path to GET (within 10 minutes) for one BagIt ZIP holding every named resource, ' +
          'each under data/<its title>/. `?keep=1` on that GET also keeps a copy in the offline library.',
        tags: ['resources'],
        params: { type: 'object', required: ['target'], properties: { target: targetParam } },
        headers: sourceHeaders,
        body: {
          type: 'object',
          required: ['resource_ids'],
          additionalProperties: false,
          properties: {
            resource_ids: { type: 'array', minItems: 1, maxItems: MAX_RESOURCES_PER_REQUEST, items: { type: 'string', minLength: 1 } },
          },
        },
        response: {
          201: { type: 'object', required: ['download'], properties: { download: { type: 'string' } } },
          ...errorResponses(400, 401, 403, 404, 405),
        },
      },
    },
    async (request, reply) => {
      const target = core.targets.get(request.params.target);
      requireAction(target, 'resource_download');
      await resolveTargetToken(core, target, request, 'source'); // refuse a bad token now, not at the GET
      const now = Date.now();
      forget(now);
      const key = randomUUID();
      selections.set(key, { target: target.info.name, ids: [...new Set(request.body.resource_ids)], created: now });
      const download = `/api_v1/targets/${encodeURIComponent(target.info.name)}/selections/${key}/zip/`;
      return reply.code(201).send({ download });
    },
  );

  app.get<{ Params: { target: string; selection: string }; Querystring: { keep?: string } }>(
    '/api_v1/targets/:target/selections/:selection/zip/',
    {
      schema: {
        summary: 'Download a named selection as one BagIt ZIP (extension)',
        tags: ['resources'],
        params: {
          type: 'object',
          required: ['target', 'selection'],
          properties: { target: targetParam, selection: { type: 'string' } },
        },
        querystring: { type: 'object', properties: { keep: { type: 'string', enum: ['1', 'true', '0', 'false'] } } },
        headers: sourceHeaders,
        produces: ['application/zip'],
        response: {
          200: { description: 'the ZIP bytes', content: { 'application/zip': { schema: { type: 'string', format: 'binary' } } } },
          ...errorResponses(401, 403, 404, 405),
        },
      },
    },
    async (request, reply) => {
      const target = core.targets.get(request.params.target);
      requireAction(target, 'resource_download');
      forget(Date.now());
      const selection = selections.get(request.params.selection);
      if (!selection || selection.target !== target.info.name) {
        throw notFound('This download link has expired (they last 10 minutes); start the download again.', 'not_found');
      }
      const signal = clientGone(request, reply);
      const ctx: TargetContext = { token: await resolveTargetToken(core, target, request, 'source'), signal };
      const { ids } = selection;
      const bagName = `${bagNameFor(target.info.name, ids[0]!)}${ids.length > 1 ? `_and_${ids.length - 1}_more` : ''}`;
      const read: ReadResult = {
        title: `${ids.length} items`,
        root: { kind: 'container', kind_name: 'folder', id: ids[0]!, container: null, title: `${ids.length} items` },
        entries: readEach(target, ctx, ids),
      };
      const keep = request.query.keep === '1' || request.query.keep === 'true';
      const resourceId = ids.length > 1 ? `${ids[0]} and ${ids.length - 1} more` : ids[0]!;
      let zip = writeBagZip(read, { targetName: target.info.name, resourceId, bagName, signal, lendTo: keep ? undefined : reply.raw });
      if (keep) zip = teeIntoLibrary(zip, await core.library.keep(bagName));
      return reply
        .type('application/zip')
        .header('content-disposition', attachmentDisposition(`${bagName}.zip`))
        .header('cache-control', 'no-store')
        .send(zip);
    },
  );
}

/** The entries of each resource in turn, each under its own title. */
async function* readEach(target: Target, ctx: TargetContext, ids: readonly string[]): AsyncGenerator<Entry> {
  for (const id of ids) yield* (await target.read(ctx, id)).entries;
}
