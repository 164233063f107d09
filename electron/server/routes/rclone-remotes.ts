// /app/rclone-remotes/*: rclone remotes the user adds in Ferry (a type and its options, kept in
// the keychain; see electron/core/targets/rclone/accounts.ts). Access key only. A remote's
// options are never sent back: the listing has names and types, nothing else.
import type { FastifyInstance } from 'fastify';
import { FerryError, notFound } from '../../core/errors.js';
import type { FerryCore } from '../../core/ferry-core.js';
import type { ServerContext } from '../context.js';
import { errorResponses } from '../schemas.js';
import { requireAccessKey } from '../tokens.js';

const authHeaders = { type: 'object', properties: { authorization: { type: 'string', description: 'Bearer <access key>' } } };
const nameParams = { type: 'object', required: ['name'], properties: { name: { type: 'string', maxLength: 40 } } };
const remoteSchema = {
  type: 'object',
  required: ['name', 'type', 'target'],
  properties: {
    name: { type: 'string' },
    type: { type: 'string', description: "rclone's backend type (sftp, s3, webdav …)" },
    target: { type: 'string', description: 'the target it appears as: rclone-<name>' },
  },
};

function accountsOf(core: FerryCore) {
  if (!core.rcloneAccounts) {
    throw new FerryError(503, 'upstream_unavailable', 'rclone is not available to Ferry (not installed, or turned off with FERRY_RCLONE=off), so no rclone remote can be added.');
  }
  return core.rcloneAccounts;
}

export function registerRcloneRemoteRoutes(app: FastifyInstance, { core }: ServerContext): void {
  app.get(
    '/app/rclone-remotes',
    {
      schema: {
        summary: 'The rclone remotes added in Ferry: names and types only (access key)',
        tags: ['app'],
        headers: authHeaders,
        response: {
          200: { type: 'object', required: ['available', 'remotes'], properties: { available: { type: 'boolean' }, remotes: { type: 'array', items: remoteSchema } } },
          ...errorResponses(401),
        },
      },
    },
    async (request) => {
      requireAccessKey(core, request);
      return { available: core.rcloneAccounts !== null, remotes: core.rcloneAccounts ? await core.rcloneAccounts.list() : [] };
    },
  );

  app.put<{ Params: { name: string }; Body: { type: string; options: Record<string, string> } }>(
    '/app/rclone-remotes/:name',
    {
      schema: {
        summary: 'Add or replace an rclone remote (secrets go to the keychain); it is a target at once (access key)',
        tags: ['app'],
        params: nameParams,
        headers: authHeaders,
        body: {
          type: 'object',
          required: ['type', 'options'],
          additionalProperties: false,
          properties: {
            type: { type: 'string', minLength: 1, maxLength: 40 },
            options: { type: 'object', maxProperties: 64, additionalProperties: { type: 'string', maxLength: 16384 } },
          },
        },
        response: { 200: remoteSchema, ...errorResponses(400, 401, 409, 502, 503) },
      },
    },
    async (request) => {
      requireAccessKey(core, request);
      return accountsOf(core).put(request.params.name, request.body.type, request.body.options);
    },
  );

  app.delete<{ Params: { name: string } }>(
    '/app/rclone-remotes/:name',
    {
      schema: {
        summary: 'Remove an rclone remote added in Ferry, and its secrets (access key)',
        tags: ['app'],
        params: nameParams,
        headers: authHeaders,
        response: { 204: { description: 'removed', type: 'null' }, ...errorResponses(401, 404, 503) },
      },
    },
    async (request, reply) => {
      requireAccessKey(core, request);
      if (!(await accountsOf(core).remove(request.params.name))) throw notFound(`There is no rclone remote '${request.params.name}' added in Ferry.`, 'not_found');
      return reply.code(204).send();
    },
  );
}
