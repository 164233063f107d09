// The HTTP listener: builds the Fastify app for /api_v1/ (+ /app/ and the renderer) over a
// FerryCore. Imports core and shared only; every target is served through the Target
// interface without naming any target.
import type { ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import multipart from '@fastify/multipart';
import Fastify, { type FastifyInstance } from 'fastify';
import { fastPathOn } from '../core/fast-paths.js';
import type { FerryCore } from '../core/ferry-core.js';
import type { ServerContext } from './context.js';
import { answerClientError, answerConnect, answerExpectationFailed, registerErrorHandling, sendError } from './errors.js';
import { registerGate } from './gate.js';
import { attachLazyCompilers, LazyCompilers } from './lazy-compilers.js';
import { registerRenderer } from './renderer.js';
import { registerAppRoutes } from './routes/app.js';
import { registerCheckRoutes } from './routes/check.js';
import { registerConflictRoutes } from './routes/conflicts.js';
import { registerContentRoutes } from './routes/content.js';
import { registerMetadataRoutes } from './routes/metadata.js';
import { registerJobRoutes } from './routes/jobs.js';
import { registerOpenApiGenerator, registerOpenApiRoute } from './routes/openapi.js';
import { registerRcloneRemoteRoutes } from './routes/rclone-remotes.js';
import { registerOperationRoutes } from './routes/operations.js';
import { registerResourceRoutes } from './routes/resources.js';
import { registerTargetRoutes } from './routes/targets.js';
import { registerUploadRoutes } from './routes/uploads.js';
import { registerVerifyRoutes } from './routes/verify.js';
import { addComponentSchemas } from './schemas.js';
import { findVersion } from './version.js';
import { pino, type DestinationStream, type Logger } from 'pino';

export interface ServerOptions {
  host: string;
  /** 0 = a free port */
  port: number;
  /** the built renderer, served at / in browser mode */
  rendererDir?: string | null;
  /** origins besides http://127.0.0.1:<port> allowed to call the API (the Electron custom protocol) */
  allowedOrigins?: string[];
  /** log errors (default true); tokens are redacted either way */
  logger?: boolean;
  /** where the error log goes (default stdout) */
  logStream?: NodeJS.WritableStream;
  /** reported by /app/session and openapi.json; default: from package.json */
  version?: string;
  /** a socket with no bytes either way for this long is closed (default 5 min; event streams send heartbeats) */
  idleTimeoutMs?: number;
  /** an idle keep-alive connection is kept this long (default 72 s); clients are told far less (see advertisedKeepAlive) */
  keepAliveTimeoutMs?: number;
}

/** all headers of a request must arrive within this (Node's default is 60 s): slowloris */
const HEADERS_TIMEOUT_MS = 20_000;
const IDLE_TIMEOUT_MS = 5 * 60_000;
const KEEP_ALIVE_TIMEOUT_MS = 72_000;

/**
 * The Keep-Alive timeout told to clients, in whole seconds: far below the time the server
 * really keeps an idle connection. A client closes a pooled connection a little before the
 * time it was told (undici: 1-2 s, on a coarse timer) and may send its next request on it
 * up to then; told almost exactly the server's own time (Node's default, timeout=72 for a
 * 73 s close), a client whose event loop was busy at that moment sent its request on a
 * socket the server was closing and got "other side closed" (issue #17.8). Told 5 s, it
 * would have to be stalled for over a minute.
 */
export function advertisedKeepAlive(keepAliveTimeoutMs: number): number {
  return Math.max(1, Math.min(5, Math.floor(keepAliveTimeoutMs / 4000)));
}

const REDACTED_HEADERS = [
  'req.headers.authorization',
  'req.headers["service-source-token"]',
  'req.headers["service-destination-token"]',
  'req.headers.cookie',
];

export async function buildServer(core: FerryCore, options: ServerOptions): Promise<FastifyInstance> {
  const compilers = new LazyCompilers();
  const app = Fastify({
    // No per-request child loggers (a measurable share of a small request's cost): the
    // only thing Ferry logs is an unexpected error, through one logger made here.
    logger: false,
    // malformed URLs, bad content-type headers: the same error shape as everything else
    frameworkErrors: (error, _request, reply) => {
      sendError(reply, error);
    },
    // requests the HTTP parser itself refuses: the same shape
    clientErrorHandler: answerClientError,
    routerOptions: {
      ignoreTrailingSlash: true,
      // resource ids (base64url of long paths) can be far longer than the default 100
      maxParamLength: 16 * 1024,
    },
    bodyLimit: 1024 * 1024, // JSON bodies only; uploads stream through multipart with their own limit
    ajv: { customOptions: { formats: { binary: true } } },
    // each validator and response serializer compiled at its first use, not all at the start (lazy-compilers.ts)
    ...(fastPathOn('lazy-schemas') ? { schemaController: { compilersFactory: compilers.factory } } : {}),
    return503OnClosing: true,
    // idle sockets (opened and never used, or a body that stalls) are closed; not a total
    // request time, which a large upload or download may legitimately exceed
    connectionTimeout: options.idleTimeoutMs ?? IDLE_TIMEOUT_MS,
    // closing means quitting: do not wait for open event streams, downloads, or sockets a
    // client opened without a request yet (those would hold close() for headersTimeout)
    forceCloseConnections: true,
    keepAliveTimeout: options.keepAliveTimeoutMs ?? KEEP_ALIVE_TIMEOUT_MS,
  });
  attachLazyCompilers(app, compilers);
  // A Keep-Alive header of our own replaces Node's (which would state the full time).
  const keepAliveHeader = `timeout=${advertisedKeepAlive(options.keepAliveTimeoutMs ?? KEEP_ALIVE_TIMEOUT_MS)}`;
  app.server.prependListener('request', (_request, response: ServerResponse) => response.setHeader('keep-alive', keepAliveHeader));
  // what Node answers itself (or not at all) before any hook runs: in the contract's shape
  app.server.on('checkExpectation', answerExpectationFailed);
  app.server.on('connect', answerConnect);
  app.server.headersTimeout = Math.min(HEADERS_TIMEOUT_MS, options.idleTimeoutMs ?? HEADERS_TIMEOUT_MS);
  const context: ServerContext = { core, version: options.version ?? findVersion() };

  registerErrorHandling(app, options.logger === false ? null : errorLogger(options.logStream));
  registerGate(app, {
    host: options.host,
    allowedOrigins: options.allowedOrigins ?? [],
    port: boundPort(app, options.port),
  });
  addComponentSchemas(app);
  await registerOpenApiGenerator(app, context.version);
  await app.register(multipart, {
    limits: { fileSize: core.config.limits.maxUploadBytes },
    throwFileSizeLimit: true,
  });

  registerTargetRoutes(app, context);
  registerResourceRoutes(app, context);
  registerOperationRoutes(app, context);
  registerUploadRoutes(app, context);
  registerVerifyRoutes(app, context);
  registerCheckRoutes(app, context);
  registerConflictRoutes(app, context);
  registerMetadataRoutes(app, context);
  registerContentRoutes(app, context);
  registerJobRoutes(app, context);
  registerAppRoutes(app, context);
  registerRcloneRemoteRoutes(app, context);
  registerOpenApiRoute(app);
  await registerRenderer(app, options.rendererDir);
  return app;
}

export async function startServer(
  core: FerryCore,
  options: ServerOptions,
): Promise<{ app: FastifyInstance; url: string; port: number }> {
  const app = await buildServer(core, options);
  try {
    await app.listen({ host: options.host, port: options.port });
  } catch (error) {
    await app.close();
    throw error;
  }
  const port = (app.server.address() as AddressInfo).port;
  return { app, url: `http://${urlHost(options.host)}:${port}`, port };
}

/** The host to put in the URL the user opens: a wildcard address is reached over loopback. */
function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '::' || host === '') return '127.0.0.1';
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/** The port actually bound, looked up once it is known (address() is a syscall per call). */
function boundPort(app: FastifyInstance, requested: number): () => number {
  let known = 0;
  return () => {
    if (known) return known;
    const port = (app.server.address() as AddressInfo | null)?.port;
    if (port) known = port;
    return port ?? requested;
  };
}

/** Errors only, with credential headers redacted (error.ts also scrubs messages and stacks). */
function errorLogger(stream?: NodeJS.WritableStream): Logger {
  const settings = { level: 'error', redact: { paths: REDACTED_HEADERS, censor: '[redacted]' } };
  return stream ? pino(settings, stream as DestinationStream) : pino(settings);
}
