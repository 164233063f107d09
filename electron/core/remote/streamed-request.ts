import http from 'node:http';
import https from 'node:https';
import { Readable, Writable } from 'node:stream';
import { giveBack } from '../read-buffers.js';
import type { Watchdog } from './body-guard.js';
import { responseOf } from './node-answer.js';

/**
 * One request whose body is a Node Readable (or none: a GET, HEAD or DELETE, with the fast
 * path `direct-requests`), sent over `node:http(s)` as it is: the stream is piped into the
 * socket, with no web stream, `Request` or fetch machinery in between. An upload is the one
 * request Ferry keeps several of in flight for seconds each (WebDAV: 8), and the
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
  body: Readable | null,
  watchdog: Watchdog,
  signal: AbortSignal | undefined,
  /** on a connection of its own, not one kept alive by the agent (see StaleConnection) */
  freshConnection = false,
): Promise<Response> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise<Response>((resolve, reject) => {
    const client = target.protocol === 'https:' ? https : http;
    // the User-Agent fetch sends on every other request (undici's default), so a server that
    // looks for one sees an upload as it sees the rest of Ferry's requests; a request without a
    // body (one fetch would have sent) asks for compression as fetch does, and its answer is
    // inflated as fetch's is (node-answer.ts): the same bytes either way
    const asFetchWould = body === null ? { accept: '*/*', 'accept-encoding': target.protocol === 'https:' ? 'br, gzip, deflate' : 'gzip, deflate' } : {};
    const request = client.request(target, { method, headers: { 'user-agent': FETCH_USER_AGENT, ...asFetchWould, ...headers }, ...(freshConnection ? { agent: false } : {}) });
    let settled = false;
    const fail = (error: unknown) => {
      if (settled) return;
      settled = true;
      stop();
      reject(error);
    };
    // aborts reach the request until the answer's body is read, or the request failed
    const abort = () => request.destroy(signal?.aborted ? signal.reason : watchdog.reason);
    const stopWatching = watchdog.onFire(abort);
    const stop = () => {
      signal?.removeEventListener('abort', abort);
      stopWatching();
    };
    signal?.addEventListener('abort', abort, { once: true });
    // once answered, a failure is the body's (node-answer.ts); before, on a kept-alive
    // connection, it may be the server's close racing this request
    request.on('error', (error) => fail(request.reusedSocket ? new StaleConnection(error) : error));
    request.once('response', (answer) => {
      let response: Response;
      try {
        response = responseOf(answer, target, method);
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
    if (!body) {
      request.end();
      return;
    }
    body.on('data', () => watchdog.touch());
    body.on('error', (error) => {
      request.destroy(error);
      fail(error);
    });
    body.pipe(givingBackTo(request));
  });
}

/**
 * A request that failed before any answer on a connection the agent had kept alive from an
 * earlier one (Node's `reusedSocket`): the server closed that connection as the request went
 * out — Apache closes idle kept-alive connections when its workers are busy, several at once
 * (seen as bursts of "socket hang up" in the bench's WebDAV → local) — so it says nothing about
 * the server being down, and another kept connection may be about to close the same way. The
 * caller sends it again at once on a connection of its own (`freshConnection`), as Go's HTTP
 * client does and Node's documentation of `reusedSocket` advises. `cause` is the socket's error.
 */
export class StaleConnection extends Error {
  constructor(cause: unknown) {
    super(`the kept-alive connection was closed by the server (${(cause as Error)?.message ?? 'network error'})`, { cause });
    this.name = 'StaleConnection';
  }
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
