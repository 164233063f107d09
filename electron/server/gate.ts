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
  // The accepted Host and Origin values, made once per bound port rather than per request.
  let forPort = -1;
  let hosts = new Set<string>();
  let origins = new Set<string>();
  const accepted = () => {
    const port = options.port();
    if (port !== forPort) {
      forPort = port;
      hosts = new Set(names.map((name) => `${name}:${port}`));
      origins = new Set(names.map((name) => `http://${name}:${port}`));
    }
  };

  // A synchronous hook: it does no I/O, and an async one costs a promise per request.
  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
    reply.headers(SECURITY_HEADERS);
    accepted();
    // Node keeps only the first of repeated Host/Origin lines: a second one (smuggled by a
    // proxy or a hand-made request) must not pass unseen behind a good first one
    if (repeatsHostOrOrigin(request)) {
      return done(refuse('This request was refused: it carries the Host or Origin header more than once.'));
    }
    const host = request.headers.host?.toLowerCase();
    if (!host || !hosts.has(host)) {
      return done(refuse('This request was refused: its Host header is not this Ferry server on the loopback interface.'));
    }

    const origin = request.headers.origin?.toLowerCase();
    if (origin !== undefined) {
      const allowedCross = crossOrigins.has(origin);
      if (!origins.has(origin) && !allowedCross) {
        return done(refuse('This request was refused: it came from a web page that is not Ferry (foreign Origin).'));
      }
      if (allowedCross) {
        // CORS only for the app's own other origin; never for anyone else
        reply.header('access-control-allow-origin', request.headers.origin);
        reply.header('vary', 'Origin');
        reply.header('access-control-expose-headers', 'Location, Content-Disposition, Retry-After, ferry-content-truncated');
        if (request.method === 'OPTIONS') {
          reply.header('access-control-allow-methods', 'GET, POST, PUT, PATCH, DELETE');
          reply.header(
            'access-control-allow-headers',
            'Authorization, Content-Type, service-source-token, service-destination-token, duplicate-file-action, ferry-confirm, ferry-provenance, ferry-folders',
          );
          reply.header('access-control-max-age', '600');
          reply.code(204).send();
          return done();
        }
      }
    }

    if (BODY_METHODS.has(request.method)) {
      const type = request.headers['content-type']?.split(';')[0]?.trim().toLowerCase();
      if (type !== undefined && type !== '' && !BODY_TYPES.has(type)) {
        return done(new FerryError(415, 'unsupported_media_type', 'Send the body as multipart/form-data (an upload) or application/json.'));
      }
    }
    done();
  });
}

/** One pass over the raw header lines for both names. */
function repeatsHostOrOrigin(request: FastifyRequest): boolean {
  const raw = request.raw.rawHeaders;
  let hosts = 0;
  let origins = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 4 && name.toLowerCase() === 'host') hosts++;
    else if (name.length === 6 && name.toLowerCase() === 'origin') origins++;
  }
  return hosts > 1 || origins > 1;
}

/** Headers for every response; set first so hijacked streams (SSE) carry them too. */
const SECURITY_HEADERS = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'same-origin',
};

