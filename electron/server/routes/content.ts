// A file's bytes (extension, docs/api.md "A file's bytes"): the first bytes of one file, raw,
// for a preview. Served so that no browser ever treats them as a page of this origin: an
// opaque type, no sniffing, and a sandbox CSP should someone open the URL itself.
import type { FastifyInstance } from 'fastify';
import { readFileHead } from '../../core/file-head.js';
import { clientGone, type ServerContext } from '../context.js';
import { errorResponses, resourceParam, targetParam, tokenHeader } from '../schemas.js';
import { resolveTargetToken } from '../tokens.js';
import { requireAction } from './resources.js';

/** The most one request reads: a preview's worth, never a download (that is 4.4's job). */
export const MAX_CONTENT_BYTES = 1024 * 1024;

/** Set when the file holds more than the bytes answered. */
export const TRUNCATED_HEADER = 'ferry-content-truncated';

export function registerContentRoutes(app: FastifyInstance, { core }: ServerContext): void {
  app.get<{ Params: { target: string; resource: string }; Querystring: { max_bytes?: number } }>(
    '/api_v1/targets/:target/resources/:resource/content/',
    {
      schema: {
        summary: "A file's first bytes (extension), raw, for a preview",
        description:
          `Up to \`max_bytes\` (default and most: ${MAX_CONTENT_BYTES}) bytes from the start of one file, with ` +
          '`Content-Length`, as `application/octet-stream` with `X-Content-Type-Options: nosniff` and ' +
          "`Content-Security-Policy: sandbox`. `ferry-content-truncated: true` when the file holds more. A folder is a 400; " +
          "the token rules are 4.4's, and a target that does not download answers 405.",
        tags: ['resources'],
        params: { type: 'object', required: ['target', 'resource'], properties: { target: targetParam, resource: resourceParam } },
        querystring: {
          type: 'object',
          properties: { max_bytes: { type: 'integer', minimum: 1, maximum: MAX_CONTENT_BYTES, default: MAX_CONTENT_BYTES } },
        },
        headers: { type: 'object', properties: { 'service-source-token': tokenHeader('source') } },
        produces: ['application/octet-stream'],
        response: {
          200: { description: "the file's first bytes", content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } },
          ...errorResponses(400, 401, 403, 404, 405, 429, 502, 503),
        },
      },
    },
    async (request, reply) => {
      const target = core.targets.get(request.params.target);
      requireAction(target, 'resource_download');
      const token = await resolveTargetToken(core, target, request, 'source');
      const maxBytes = request.query.max_bytes ?? MAX_CONTENT_BYTES;
      const head = await readFileHead(target, { token, signal: clientGone(request, reply) }, request.params.resource, maxBytes);
      if (head.truncated) reply.header(TRUNCATED_HEADER, 'true');
      return reply
        .type('application/octet-stream')
        .header('content-length', head.bytes.length)
        .header('x-content-type-options', 'nosniff')
        .header('content-security-policy', "sandbox; default-src 'none'")
        .header('cache-control', 'no-store')
        .send(head.bytes);
    },
  );
}
