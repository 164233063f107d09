// File operations (docs/api.md "File operations", an extension): delete, rename/move and new
// folder on any target that offers them, and Ferry's trash. The core decides everything
// (operations/service.ts); this module reads requests, demands the confirmation header for
// what cannot be taken back by accident, and writes undo requests as URLs.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { CreateFolderResult, DeletedInto, DeleteResult, MoveResult, RestoreResult, TrashItem, UndoRequest } from '../../../shared/api.js';
import { badRequest, FerryError } from '../../core/errors.js';
import type { UndoPlan, MoveRequest } from '../../core/operations/service.js';
import type { Target, TargetContext, TrashReceipt } from '../../core/target.js';
import { clientGone, type ServerContext } from '../context.js';
import { errorResponses, resourceParam, targetParam, tokenHeader } from '../schemas.js';
import { requireAccessKey, resolveTargetToken, tokenFromHeader } from '../tokens.js';
import { baseUrl, encodeSegment, resourceFromPath, resourceUrl } from '../urls.js';
import { toSummary } from './resources.js';

export const CONFIRM_HEADER = 'ferry-confirm';

/** 428 unless the request carries `ferry-confirm: <word>`: a stray request (a crawler, a replay) never deletes. */
function requireConfirmation(request: FastifyRequest, word: 'delete' | 'overwrite', doing: string): void {
  const sent = request.headers[CONFIRM_HEADER];
  const values = (Array.isArray(sent) ? sent : [sent ?? '']).flatMap((value) => value.split(',')).map((value) => value.trim().toLowerCase());
  if (!values.includes(word)) {
    throw new FerryError(428, 'confirmation_required', `${doing} needs the header '${CONFIRM_HEADER}: ${word}', so that no request deletes anything by accident. Ask the person first, then send it.`);
  }
}

/** The token for a writing operation: the destination header, else the source header, else Bearer. */
async function contextFor(context: ServerContext, target: Target, request: FastifyRequest, signal: AbortSignal): Promise<TargetContext> {
  const role = tokenFromHeader(request.headers, 'destination') === undefined && tokenFromHeader(request.headers, 'source') !== undefined ? 'source' : 'destination';
  return { token: await resolveTargetToken(context.core, target, request, role), signal };
}

function bareId(request: FastifyRequest): string {
  const { id, view } = resourceFromPath(request);
  if (view !== 'detail') throw badRequest('File operations take the bare resource id, without .json or .zip.');
  return id;
}

const INTO_WORDS: Record<DeletedInto, string> = {
  ferry_trash: "moved to Ferry's trash (POST the undo request to put it back)",
  system_trash: "moved to the system's trash (put it back from there)",
  deleted: 'deleted for good',
};

function deletedInto(receipt: TrashReceipt | { kind: 'deleted' }): { into: DeletedInto; trashId: string | null } {
  return { into: receipt.kind, trashId: receipt.kind === 'ferry_trash' ? receipt.id : null };
}

function undoRequest(plan: UndoPlan, base: string, targetName: string): UndoRequest | null {
  if (plan === null) return null;
  switch (plan.kind) {
    case 'restore':
      return { method: 'POST', url: `${base}/api_v1/trash/${encodeSegment(plan.trashId)}/restore/`, description: "Puts it back from Ferry's trash." };
    case 'move':
      return {
        method: 'PATCH',
        url: `${resourceUrl(base, targetName, plan.id)}/`,
        body: { title: plan.title, container: plan.container ?? 'None' },
        description: `Moves it back, as '${plan.title}'.`,
      };
    case 'delete':
      return { method: 'DELETE', url: `${resourceUrl(base, targetName, plan.id)}/`, headers: { [CONFIRM_HEADER]: 'delete' }, description: 'Deletes the folder again.' };
  }
}

/** The answers' shapes, for openapi.json; open, so the serializer never drops a field. */
const summary = { type: 'object', additionalProperties: true, description: 'a ResourceSummary' } as const;
const undoSchema = {
  type: ['object', 'null'],
  additionalProperties: true,
  description: 'the request that undoes the operation, to send as it is; null when Ferry cannot undo it',
  properties: { method: { type: 'string' }, url: { type: 'string' }, body: { type: 'object', additionalProperties: true }, headers: { type: 'object', additionalProperties: { type: 'string' } }, description: { type: 'string' } },
} as const;
const deletedIntoSchema = { type: 'string', enum: ['ferry_trash', 'system_trash', 'deleted'] } as const;
const answers = {
  delete: {
    type: 'object',
    additionalProperties: true,
    required: ['deleted', 'deleted_into', 'message', 'trash_id', 'undo'],
    properties: { deleted: summary, deleted_into: deletedIntoSchema, message: { type: 'string' }, trash_id: { type: ['string', 'null'] }, undo: undoSchema },
  },
  move: {
    type: 'object',
    additionalProperties: true,
    required: ['resource', 'previous', 'replaced', 'message', 'undo'],
    properties: {
      resource: summary,
      previous: { type: 'object', additionalProperties: true, properties: { id: { type: 'string' }, title: { type: 'string' }, container: { type: 'string' } } },
      replaced: { type: ['object', 'null'], additionalProperties: true, properties: { title: { type: 'string' }, deleted_into: deletedIntoSchema, trash_id: { type: ['string', 'null'] } } },
      message: { type: 'string' },
      undo: undoSchema,
    },
  },
  folder: { type: 'object', additionalProperties: true, required: ['resource', 'message', 'undo'], properties: { resource: summary, message: { type: 'string' }, undo: undoSchema } },
  trashItem: {
    type: 'object',
    additionalProperties: true,
    properties: {
      id: { type: 'string' },
      target: { type: 'string' },
      title: { type: 'string' },
      kind_name: { type: 'string', enum: ['folder', 'file'] },
      original_path: { type: 'string' },
      trashed_at: { type: 'string' },
      restore_url: { type: 'string' },
    },
  },
  restore: { type: 'object', additionalProperties: true, required: ['resource', 'message'], properties: { resource: summary, message: { type: 'string' } } },
} as const;
const tokenHeaders = {
  type: 'object',
  properties: {
    'service-destination-token': tokenHeader('destination'),
    'service-source-token': { type: 'string', description: 'accepted when no service-destination-token is sent' },
  },
};
const resourceParams = { type: 'object', required: ['target', 'resource'], properties: { target: targetParam, resource: resourceParam } };

export function registerOperationRoutes(app: FastifyInstance, context: ServerContext): void {
  const { core } = context;

  app.delete<{ Params: { target: string; resource: string } }>(
    '/api_v1/targets/:target/resources/:resource/',
    {
      schema: {
        summary: 'Delete a file or folder (extension)',
        description:
          `Needs \`${CONFIRM_HEADER}: delete\` (else 428). Local targets move it to a trash (Ferry's, restorable ` +
          "through `undo`, or the system's in the desktop app); remote targets delete it. The answer says what went where.",
        tags: ['operations'],
        params: resourceParams,
        headers: { ...tokenHeaders, properties: { ...tokenHeaders.properties, [CONFIRM_HEADER]: { type: 'string', enum: ['delete'] } } },
        response: { 200: answers.delete, ...errorResponses(400, 401, 403, 404, 405, 409, 428, 429, 502, 503) },
      },
    },
    async (request, reply) => {
      const target = core.targets.get(request.params.target);
      const id = bareId(request);
      requireConfirmation(request, 'delete', 'Deleting');
      const ctx = await contextFor(context, target, request, clientGone(request, reply));
      const { outcome, undo } = await core.operations.delete(target, ctx, id);
      const base = baseUrl(request);
      const { into, trashId } = deletedInto(outcome.into);
      const body: DeleteResult = {
        deleted: toSummary(outcome.node, base, target.info.name),
        deleted_into: into,
        message: `'${outcome.node.title}' was ${INTO_WORDS[into]}.`,
        trash_id: trashId,
        undo: undoRequest(undo, base, target.info.name),
      };
      return body;
    },
  );

  app.patch<{ Params: { target: string; resource: string }; Body: MoveRequest }>(
    '/api_v1/targets/:target/resources/:resource/',
    {
      schema: {
        summary: 'Rename and/or move a file or folder (extension)',
        description:
          'Body `{"title": "new name"}` renames, `{"container": "<folder id>"|"None"}` moves, both together do both. ' +
          'A taken name is a 409 naming it, unless `"overwrite": true` (which also needs `' +
          `${CONFIRM_HEADER}: overwrite\`): then what was there goes to the trash (local) or is replaced (remote).`,
        tags: ['operations'],
        params: resourceParams,
        headers: tokenHeaders,
        body: {
          type: 'object',
          additionalProperties: false,
          properties: { title: { type: 'string' }, container: { type: 'string' }, overwrite: { type: 'boolean' } },
        },
        response: { 200: answers.move, ...errorResponses(400, 401, 403, 404, 405, 409, 428, 429, 502, 503) },
      },
    },
    async (request, reply) => {
      const target = core.targets.get(request.params.target);
      const id = bareId(request);
      const body = request.body ?? {};
      if (body.overwrite === true) requireConfirmation(request, 'overwrite', 'Replacing an existing item');
      const ctx = await contextFor(context, target, request, clientGone(request, reply));
      const { outcome, undo } = await core.operations.move(target, ctx, id, body);
      const base = baseUrl(request);
      const { before, after, replaced } = outcome;
      const moved = after.container !== before.container;
      const renamed = after.title !== before.title;
      const what = renamed && moved ? `renamed to '${after.title}' and moved` : renamed ? `renamed to '${after.title}'` : moved ? 'moved' : 'left where it was (nothing to change)';
      const replacedNote = replaced ? ` The '${replaced.title}' that was there was ${INTO_WORDS[deletedInto(replaced.into).into]}.` : '';
      const result: MoveResult = {
        resource: toSummary(after, base, target.info.name),
        previous: { id: before.id, title: before.title, container: before.container ?? 'None' },
        replaced: replaced ? { title: replaced.title, deleted_into: deletedInto(replaced.into).into, trash_id: deletedInto(replaced.into).trashId } : null,
        message: `'${before.title}' was ${what}.${replacedNote}`,
        undo: undoRequest(undo, base, target.info.name),
      };
      return result;
    },
  );

  type FolderRoute = { Params: { target: string; resource?: string }; Body: { title?: unknown } };
  const createFolder = async (request: FastifyRequest<FolderRoute>, reply: FastifyReply<FolderRoute>) => {
    const target = core.targets.get(request.params.target);
    const ctx = await contextFor(context, target, request, clientGone(request, reply));
    const containerId = request.params.resource === undefined || request.params.resource === 'None' ? null : request.params.resource;
    const { node, undo } = await core.operations.createFolder(target, ctx, containerId, request.body?.title);
    const base = baseUrl(request);
    const result: CreateFolderResult = { resource: toSummary(node, base, target.info.name), message: `The folder '${node.title}' was made.`, undo: undoRequest(undo, base, target.info.name) };
    return reply.code(201).send(result);
  };
  const folderSchema = (summary: string, withResource: boolean) => ({
    schema: {
      summary,
      tags: ['operations'],
      params: withResource ? resourceParams : { type: 'object', required: ['target'], properties: { target: targetParam } },
      headers: tokenHeaders,
      body: { type: 'object', required: ['title'], additionalProperties: false, properties: { title: { type: 'string' } } },
      response: { 201: answers.folder, ...errorResponses(400, 401, 403, 404, 405, 409, 429, 502, 503) },
    },
  });
  app.post<FolderRoute>('/api_v1/targets/:target/resources/:resource/folders/', folderSchema('Make a folder inside a folder (extension)', true), createFolder);
  app.post<FolderRoute>('/api_v1/targets/:target/folders/', folderSchema('Make a folder at the top level (extension)', false), createFolder);

  app.get(
    '/api_v1/trash/',
    {
      schema: {
        summary: "What Ferry's trash holds, newest first (extension; access key only)",
        tags: ['operations'],
        response: { 200: { type: 'array', items: answers.trashItem }, ...errorResponses(401) },
      },
    },
    async (request) => {
      requireAccessKey(core, request);
      const base = baseUrl(request);
      return (await core.operations.trashed()).map(
        (item): TrashItem => ({
          id: item.id,
          target: item.origin.target,
          title: item.origin.path.slice(item.origin.path.lastIndexOf('/') + 1),
          kind_name: item.origin.kind,
          original_path: item.origin.path,
          trashed_at: item.trashedAt.toISOString(),
          restore_url: `${base}/api_v1/trash/${encodeSegment(item.id)}/restore/`,
        }),
      );
    },
  );

  app.post<{ Params: { id: string } }>(
    '/api_v1/trash/:id/restore/',
    {
      schema: {
        summary: "Put an item of Ferry's trash back where it was (extension; access key only)",
        description: 'Never over anything: 409 when its name is taken again or its folder is gone.',
        tags: ['operations'],
        params: { type: 'object', required: ['id'], properties: { id: { type: 'string' } } },
        response: { 200: answers.restore, ...errorResponses(401, 404, 405, 409) },
      },
    },
    async (request, reply) => {
      requireAccessKey(core, request);
      const signal = clientGone(request, reply);
      const { item, node } = await core.operations.restore(request.params.id, (target) => contextFor(context, target, request, signal));
      const result: RestoreResult = {
        resource: toSummary(node, baseUrl(request), item.origin.target),
        message: `'${item.origin.path}' is back where it was.`,
      };
      return result;
    },
  );
}
