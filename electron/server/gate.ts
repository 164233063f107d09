// The security gate (API.md "Security gate"), run first on EVERY request — API routes,
// static files, 404s. It defends the loopback listener against other web pages in the
// user's browser: DNS rebinding (Host check), cross-site requests (Origin check) and
// "simple" cross-site form posts (only multipart/form-data or JSON bodies).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { FerryError } from '../core/errors.js';

const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]'];
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);
const BODY_TYPES = new Set(['multipart/form-data', 'application/json']);

export const CONTENT_SECURITY_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

export interface GateOptions {
  /** the address the server listens on; a specific non-loopback name is accepted as a Host too */
  host: string;
  /** the port actually bound (known only after listen) */
  port: () => number;
  /** origins besides the app's own http://127.0.0.1:<port> (e.g. the Electron custom protocol) */
  allowedOrigins: string[];
}

const refuse = (message: string) => new FerryError(403, 'gate_refused', message);

function hostNames(options: GateOptions): string[] {
  const names = [...LOOPBACK_NAMES];
  const own = options.host.includes(':') && !options.host.startsWith('[') ? `[${options.host}]` : options.host;
  if (!['0.0.0.0', '[::]', ''].includes(own) && !names.includes(own)) names.push(own.toLowerCase());
  return names;
}

export function registerGate(app: FastifyInstance, options: GateOptions): void {
  const names = hostNames(options);
  const crossOrigins = new Set(options.allowedOrigins.map((origin) => origin.replace(/\/$/, '').toLowerCase()));

  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    setSecurityHeaders(reply);
    const port = options.port();
    // Node keeps only the first of repeated Host/Origin lines: a second one (smuggled by a
    // proxy or a hand-made request) must not pass unseen behind a good first one
    if (countHeader(request, 'host') > 1 || countHeader(request, 'origin') > 1) {
      throw refuse('This request was refused: it carries the Host or Origin header more than once.');
    }
    const host = request.headers.host?.toLowerCase();
    if (!host || !names.some((name) => host === `${name}:${port}`)) {
      throw refuse('This request was refused: its Host header is not this Ferry server on the loopback interface.');
    }

    const origin = request.headers.origin?.toLowerCase();
    if (origin !== undefined) {
      const sameOrigin = names.some((name) => origin === `http://${name}:${port}`);
      const allowedCross = crossOrigins.has(origin);
      if (!sameOrigin && !allowedCross) {
        throw refuse('This request was refused: it came from a web page that is not Ferry (foreign Origin).');
      }
      if (allowedCross) {
        // CORS only for the app's own other origin; never for anyone else
        reply.header('access-control-allow-origin', request.headers.origin);
        reply.header('vary', 'Origin');
        reply.header('access-control-expose-headers', 'Location, Content-Disposition, Retry-After');
        if (request.method === 'OPTIONS') {
          reply.header('access-control-allow-methods', 'GET, POST, PUT, DELETE');
          reply.header(
            'access-control-allow-headers',
            'Authorization, Content-Type, service-source-token, service-destination-token, duplicate-file-action',
          );
          reply.header('access-control-max-age', '600');
          return reply.code(204).send();
        }
      }
    }

    if (BODY_METHODS.has(request.method)) {
      const type = request.headers['content-type']?.split(';')[0]?.trim().toLowerCase();
      if (type !== undefined && type !== '' && !BODY_TYPES.has(type)) {
        throw new FerryError(415, 'unsupported_media_type', 'Send the body as multipart/form-data (an upload) or application/json.');
      }
    }
  });
}

function countHeader(request: FastifyRequest, name: string): number {
  const raw = request.raw.rawHeaders;
  let count = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.toLowerCase() === name) count++;
  return count;
}

/** Headers for every response; set early so hijacked streams (SSE) carry them too. */
export function setSecurityHeaders(reply: FastifyReply): void {
  reply.header('content-security-policy', CONTENT_SECURITY_POLICY);
  reply.header('x-content-type-options', 'nosniff');
  reply.header('x-frame-options', 'DENY');
  reply.header('referrer-policy', 'no-referrer');
  reply.header('cross-origin-resource-policy', 'same-origin');
}
