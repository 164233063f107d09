// One place that turns anything thrown into the contract's `{error, code}` with a status.
// Never a stack, a token or an absolute path: unknown errors get a fixed sentence.
import { STATUS_CODES } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ApiError, ErrorCode } from '../../shared/api.js';
import { CancelledError, isFerryError } from '../core/errors.js';
import { scrubbedError } from './request-secrets.js';
import type { Logger } from 'pino';

export interface MappedError {
  status: number;
  body: ApiError;
  retryAfter?: number;
}

const INTERNAL: ApiError = { error: 'Something went wrong inside Ferry; the error was logged.', code: 'internal_error' };

const VALIDATION_PART: Record<string, string> = {
  body: 'The JSON body',
  querystring: 'The query string',
  params: 'The path',
  headers: 'The headers',
};

export function mapError(error: unknown): MappedError & { log: boolean } {
  if (isFerryError(error)) {
    return { status: error.status, body: { error: error.message, code: error.code }, retryAfter: error.retryAfter, log: error.status >= 500 };
  }
  if (error instanceof CancelledError) {
    return { status: 409, body: { error: 'The request was cancelled.', code: 'conflict' }, log: false };
  }
  const fastifyError = error as Partial<FastifyError> & { validationContext?: string };
  if (fastifyError.validation) {
    const part = VALIDATION_PART[fastifyError.validationContext ?? ''] ?? 'The request';
    const detail = fastifyError.validation
      .map((issue) => `${issue.instancePath ? issue.instancePath.replace(/^\//, '').replace(/\//g, '.') + ' ' : ''}${issue.message ?? 'is not valid'}`)
      .join('; ');
    return { status: 400, body: { error: `${part} is not valid: ${detail}.`, code: 'bad_request' }, log: false };
  }
  // Fastify's and its plugins' own client errors (bad JSON, multipart limits): their
  // messages are fixed English sentences without paths, safe to pass on.
  const status = fastifyError.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500 && typeof fastifyError.code === 'string' && fastifyError.code.startsWith('FST_')) {
    const code: ErrorCode = status === 413 ? 'too_large' : status === 415 ? 'unsupported_media_type' : status === 404 ? 'not_found' : 'bad_request';
    const message = fastifyError.message ?? 'The request is malformed.';
    return { status: status === 406 ? 400 : status, body: { error: sentence(message), code }, log: false };
  }
  return { status: 500, body: INTERNAL, log: true };
}

function sentence(message: string): string {
  const trimmed = message.trim();
  const capital = trimmed.charAt(0).toUpperCase() + trimmed.slice(1);
  return /[.!?]$/.test(capital) ? capital : `${capital}.`;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Ferry's error log (decorations reach every encapsulated context), or null */
    ferryErrorLog: Logger | null;
  }
}

export function sendError(reply: FastifyReply, error: unknown): FastifyReply {
  const mapped = mapError(error);
  if (mapped.log) {
    const { request } = reply;
    reply.server.ferryErrorLog?.error({ err: scrubbedError(error, request), req: { method: request.method, url: request.url, headers: request.headers } }, 'request failed');
  }
  if (mapped.retryAfter !== undefined) reply.header('retry-after', String(Math.max(0, Math.ceil(mapped.retryAfter))));
  return reply.code(mapped.status).type('application/json; charset=utf-8').send(mapped.body);
}

export function registerErrorHandling(app: FastifyInstance, log: Logger | null): void {
  app.decorate('ferryErrorLog', log);
  app.setErrorHandler((error: unknown, _request: FastifyRequest, reply: FastifyReply) => {
    // the listing or download already started: the stream code destroys the socket
    if (reply.raw.headersSent) return;
    reply.removeHeader('content-disposition');
    return sendError(reply, error);
  });
}

/** Unknown routes, in the same shape (the renderer's SPA fallback decides first when set). */
export function notFoundBody(method: string, url: string): ApiError {
  const full = url.split('?')[0] ?? url;
  const path = full.length > 200 ? `${full.slice(0, 200)}…` : full;
  return { error: `There is no route ${method} ${path}. GET /api_v1/openapi.json lists them.`, code: 'not_found' };
}

/**
 * Requests Node's HTTP parser rejects before any route sees them (bad header characters,
 * headers over 16 KiB, Content-Length with Transfer-Encoding, broken chunks): answered in
 * the contract's shape, as Fastify's default would answer `{error, message, statusCode}`.
 * The socket is closed: the parser cannot find the next request in what follows.
 */
export function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  let status = 400;
  let body: ApiError = { error: 'The request is not valid HTTP (a malformed request line, header or body framing); it was not read.', code: 'bad_request' };
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    status = 431;
    body = { error: 'The request headers are larger than the server accepts (16 KiB in all); send fewer or shorter headers.', code: 'too_large' };
  } else if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    status = 408;
    body = { error: 'The request did not arrive in time; send it again.', code: 'bad_request' };
  }
  answerOnSocket(socket, status, body);
}

/**
 * CONNECT (a proxy tunnel): Node hands the socket over without any answer unless someone
 * listens, so the client saw a bare close. Ferry is no proxy: 405 in the contract's shape.
 */
export function answerConnect(_request: IncomingMessage, socket: Socket): void {
  answerOnSocket(socket, 405, { error: 'Ferry is not a proxy; CONNECT is not supported.', code: 'action_not_supported' });
}

function answerOnSocket(socket: Socket, status: number, body: ApiError): void {
  if (socket.destroyed) return;
  // A pipelined request can fail to parse while an earlier one's answer is streaming on
  // this socket (a download): bytes written now would land inside that body. Then the
  // socket is only closed, which cuts that answer off visibly (Node's own check is similar).
  const current = (socket as Socket & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
  if (socket.writable && !current?.headersSent) {
    const json = JSON.stringify(body);
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(json)}\r\n` +
        `X-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${json}`,
    );
  }
  socket.destroy();
}

/**
 * An `Expect` other than 100-continue: Node answers 417 itself, with an empty body and none
 * of the gate's headers, before any route or hook runs. The same refusal, in the contract's shape.
 */
export function answerExpectationFailed(_request: IncomingMessage, response: ServerResponse): void {
  const json = JSON.stringify({ error: "The Expect header can only be '100-continue'; send the request without it.", code: 'bad_request' } satisfies ApiError);
  response.writeHead(417, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(json),
    'x-content-type-options': 'nosniff',
    connection: 'close',
  });
  response.end(json);
}
