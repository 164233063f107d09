// /app/*: what only the desktop UI (holding the access key) needs — the session, the
// remote tokens kept in the keychain, and the local folders of the person's choosing.
// A stored token is never sent back.
import type { FastifyInstance } from 'fastify';
import { badRequest } from '../../core/errors.js';
import { tokenAccount } from '../../core/keychain/port.js';
import type { Target } from '../../core/target.js';
import type { ServerContext } from '../context.js';
import { errorResponses } from '../schemas.js';
import { requireAccessKey } from '../tokens.js';

const targetParams = { type: 'object', required: ['target'], properties: { target: { type: 'string' } } };
const authHeaders = { type: 'object', properties: { authorization: { type: 'string', description: 'Bearer <access key>' } } };

function requireRemote(target: Target): void {
  if (target.info.credential !== 'remote') {
    throw badRequest(`${target.info.readable_name} uses Ferry's access key; there is no token to store for it.`);
  }
}

const localRoot = {
  type: 'object',
  required: ['name', 'label', 'path'],
  properties: {
    name: { type: 'string', description: 'the target serving it, e.g. local-data' },
    label: { type: 'string' },
    path: { type: 'string', description: 'absolute, symbolic links resolved' },
  },
};

export function registerAppRoutes(app: FastifyInstance, context: ServerContext): void {
  registerTokenRoutes(app, context);
  registerLocalRootRoutes(app, context);
}

/**
 * Local folders of the person's choosing (core/local-roots.ts): each is a target of its
 * own, `local-<slug>`, listed and browsed like `local`. PUT is keyed by the path, so
 * repeating it renames instead of adding twice; DELETE forgets the folder, never its files.
 */
function registerLocalRootRoutes(app: FastifyInstance, { core }: ServerContext): void {
  app.get(
    '/app/local-roots',
    {
      schema: {
        summary: 'The local folders chosen besides the workspace (access key)',
        tags: ['app'],
        headers: authHeaders,
        response: {
          200: {
            type: 'object',
            required: ['workspace', 'roots'],
            properties: { workspace: { type: 'string', description: "the `local` target's folder" }, roots: { type: 'array', items: localRoot } },
          },
          ...errorResponses(401),
        },
      },
    },
    async (request) => {
      requireAccessKey(core, request);
      return { workspace: core.config.workspace, roots: core.localRoots.list() };
    },
  );

  app.put<{ Body: { path: string; label?: string } }>(
    '/app/local-roots',
    {
      schema: {
        summary: 'Add a local folder as a target of its own, or rename it (access key)',
        tags: ['app'],
        headers: authHeaders,
        body: {
          type: 'object',
          required: ['path'],
          additionalProperties: false,
          properties: { path: { type: 'string', maxLength: 4096 }, label: { type: 'string', maxLength: 200 } },
        },
        response: { 200: localRoot, ...errorResponses(400, 401) },
      },
    },
    async (request) => {
      requireAccessKey(core, request);
      return core.localRoots.put(request.body.path, request.body.label);
    },
  );

  app.delete<{ Params: { name: string } }>(
    '/app/local-roots/:name',
    {
      schema: {
        summary: 'Forget a chosen local folder; its files stay where they are (access key)',
        tags: ['app'],
        params: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
        headers: authHeaders,
        response: { 204: { description: 'forgotten', type: 'null' }, ...errorResponses(401, 404) },
      },
    },
    async (request, reply) => {
      requireAccessKey(core, request);
      await core.localRoots.remove(request.params.name);
      return reply.code(204).send();
    },
  );
}

function registerTokenRoutes(app: FastifyInstance, { core, version }: ServerContext): void {
  app.get(
    '/app/session',
    {
      schema: {
        summary: 'What the desktop UI needs at start (access key)',
        tags: ['app'],
        headers: authHeaders,
        response: {
          200: {
            type: 'object',
            required: ['version', 'keychain', 'targets'],
            properties: {
              version: { type: 'string' },
              keychain: {
                type: 'object',
                required: ['persistent', 'description'],
                properties: { persistent: { type: 'boolean' }, description: { type: 'string' } },
              },
              targets: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['name', 'readable_name', 'credential', 'has_stored_token', 'can_verify'],
                  properties: {
                    name: { type: 'string' },
                    readable_name: { type: 'string' },
                    credential: { type: 'string', enum: ['access-key', 'remote'] },
                    has_stored_token: { type: 'boolean' },
                    can_verify: { type: 'boolean', description: 'POST …/resources/<id>/verify/ re-checks stored bytes (the offline library)' },
                  },
                },
              },
            },
          },
          ...errorResponses(401),
        },
      },
    },
    async (request) => {
      requireAccessKey(core, request);
      const targets = await Promise.all(
        core.targets.all().map(async (target) => ({
          name: target.info.name,
          readable_name: target.info.readable_name,
          credential: target.info.credential,
          has_stored_token: target.info.credential === 'remote' && (await core.secrets.get(tokenAccount(target.info.name))) !== null,
          can_verify: typeof target.verify === 'function',
        })),
      );
      return { version, keychain: { persistent: core.secrets.persistent, description: core.secrets.description }, targets };
    },
  );

  app.put<{ Params: { target: string }; Body: { token: string } }>(
    '/app/tokens/:target',
    {
      schema: {
        summary: "Store a remote target's token in the keychain (access key)",
        tags: ['app'],
        params: targetParams,
        headers: authHeaders,
        body: {
          type: 'object',
          required: ['token'],
          additionalProperties: false,
          properties: { token: { type: 'string', minLength: 1, maxLength: 16384 } },
        },
        response: { 204: { description: 'stored', type: 'null' }, ...errorResponses(400, 401, 404) },
      },
    },
    async (request, reply) => {
      requireAccessKey(core, request);
      const target = core.targets.get(request.params.target);
      requireRemote(target);
      const token = request.body.token.trim();
      if (!token) throw badRequest('The token is empty.');
      await core.secrets.set(tokenAccount(target.info.name), token);
      return reply.code(204).send();
    },
  );

  app.delete<{ Params: { target: string } }>(
    '/app/tokens/:target',
    {
      schema: {
        summary: "Forget a remote target's stored token (access key)",
        tags: ['app'],
        params: targetParams,
        headers: authHeaders,
        response: { 204: { description: 'forgotten (or there was none)', type: 'null' }, ...errorResponses(401, 404) },
      },
    },
    async (request, reply) => {
      requireAccessKey(core, request);
      const target = core.targets.get(request.params.target);
      await core.secrets.delete(tokenAccount(target.info.name));
      return reply.code(204).send();
    },
  );

  app.post<{ Params: { target: string }; Body: { token?: string } | undefined }>(
    '/app/tokens/:target/test',
    {
      schema: {
        summary: 'Try a token (the given one, else the stored one) by listing the top level (access key)',
        tags: ['app'],
        params: targetParams,
        headers: authHeaders,
        body: {
          content: {
            'application/json': {
              schema: { type: 'object', additionalProperties: false, properties: { token: { type: 'string' } } },
            },
          },
        },
        response: {
          200: { type: 'object', required: ['ok'], properties: { ok: { type: 'boolean' } } },
          ...errorResponses(400, 401, 403, 404, 429, 502, 503),
        },
      },
    },
    async (request) => {
      requireAccessKey(core, request);
      const target = core.targets.get(request.params.target);
      let token = request.body?.token?.trim() || null;
      if (target.info.credential === 'access-key') token = core.accessKey;
      token ??= await core.secrets.get(tokenAccount(target.info.name));
      if (!token) throw badRequest(`No ${target.info.readable_name} token is stored; enter one to test it.`);
      const controller = new AbortController();
      const iterator = target.list({ token, signal: controller.signal }, { container: null })[Symbol.asyncIterator]();
      // a failure is the target's own error (e.g. "the OSF token is invalid or expired"),
      // answered by the error handler like on any route
      try {
        await iterator.next();
        return { ok: true };
      } finally {
        controller.abort();
        await iterator.return?.().catch(() => undefined);
      }
    },
  );
}
