import http from 'node:http';
import https from 'node:https';
import { Readable, Writable } from 'node:stream';
import { giveBack } from '../read-buffers.js';
import type { Watchdog } from './body-guard.js';

/**
 * One request whose body is a Node Readable, sent over `node:http(s)` as it is: the stream is
 * piped into the socket, with no web stream, `Request` or fetch machinery in between. An upload
 * is the one request Ferry keeps several of in flight for seconds each (WebDAV: 8), and the
 * objects fetch makes around a streamed body (the body turned into a web stream, its transform,
 * the request's signals and promises) lived long enough to die in V8's old generation, which
 * set the server's peak memory (docs/performance.md, "Peak memory…").
 *
 * Invariants: every chunk the socket takes touches `watchdog` (a pause in sending, or in
 * waiting for the answer, is the caller's timeout, never the upload's size); `signal` or the
 * watchdog firing destroys the request and, once answered, the response's body; a failure of
 * the body's own stream rejects with that stream's error; redirects are not followed (the
 * caller follows them by hand). The connection is kept alive by Node's global agents.
 */
export function sendStreamed(
  target: URL,
  method: string,
  headers: Record<string, string>,
  body: Readable,
  watchdog: Watchdog,
  signal: AbortSignal | undefined,
): Promise<Response> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise<Response>((resolve, reject) => {
    const client = target.protocol === 'https:' ? https : http;
    // the User-Agent fetch sends on every other request (undici's default), so a server that
    // looks for one sees an upload as it sees the rest of Ferry's requests
    const request = client.request(target, { method, headers: { 'user-agent': FETCH_USER_AGENT, ...headers } });
    let settled = false;
    const fail = (error: unknown) => {
      if (settled) return;
      settled = true;
      stop();
      reject(error);
    };
    // aborts reach the request until the answer's body is read, or the request failed
    const abort = () => request.destroy(signal?.aborted ? signal.reason : watchdog.signal.reason);
    const stop = () => {
      signal?.removeEventListener('abort', abort);
      watchdog.signal.removeEventListener('abort', abort);
    };
    signal?.addEventListener('abort', abort, { once: true });
    watchdog.signal.addEventListener('abort', abort, { once: true });
    body.on('data', () => watchdog.touch());
    body.on('error', (error) => {
      request.destroy(error);
      fail(error);
    });
    request.on('error', fail);
    request.once('response', (answer) => {
      let response: Response;
      try {
        response = responseOf(answer, target);
      } catch (error) {
        // a status no Response can carry (below 200, above 599)
        request.destroy();
        return fail(error);
      }
      settled = true;
      answer.once('close', () => {
        stop();
        // answered before the body was sent whole (a refusal): the connection cannot be reused
        if (!request.writableFinished) request.destroy();
      });
      resolve(response);
    });
    body.pipe(givingBackTo(request));
  });
}

/**
 * The request as the body's pipe destination, each chunk given back to the reader that lent it
 * (read-buffers.ts) once the socket has taken it: the request is the last holder of an
 * upload's bytes. Backpressure is the request's: a chunk is written once the one before it
 * has been taken.
 */
function givingBackTo(request: http.ClientRequest): Writable {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      request.write(chunk, (error) => {
        giveBack(chunk);
        callback(error ?? null);
      });
    },
    final(callback) {
      request.end(() => callback());
    },
  });
  // a request that failed or closed takes no more (as pipe() stops writing to a destination
  // that closed); its failure is the request's own 'error', which the caller hears
  request.once('close', () => sink.destroy());
  sink.on('error', () => undefined);
  return sink;
}

/** what Node's fetch (undici) puts in User-Agent when the request has none */
const FETCH_USER_AGENT = 'node';

// statuses a Response may not carry a body with (fetch's null body statuses)
const NULL_BODY = new Set([101, 204, 205, 304]);

/** The answer as a fetch Response (what the rest of RemoteClient reads), its body streamed. */
function responseOf(answer: http.IncomingMessage, target: URL): Response {
  const headers = new Headers();
  const raw = answer.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
  const status = answer.statusCode ?? 502;
  let body: ReadableStream<Uint8Array> | null = null;
  if (NULL_BODY.has(status)) answer.resume();
  else body = Readable.toWeb(answer) as unknown as ReadableStream<Uint8Array>;
  const response = new Response(body, { status, statusText: answer.statusMessage ?? '', headers });
  Object.defineProperty(response, 'url', { value: target.toString() });
  return response;
}
