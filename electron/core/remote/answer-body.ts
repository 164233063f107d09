import { bodyStream, holdsNodeBody } from './node-answer.js';

/**
 * Lets go of an answer whose body the caller has no use for (a WebDAV server's `201 Created`
 * page after a PUT or a MOVE), so that its connection serves the next request: the body is
 * read to its end, up to `limit` bytes, and only a longer one is cancelled.
 *
 * Why not just cancel: a body cancelled before its end takes its connection with it. Node's
 * `http` destroys the socket of a response not read to its end (`IncomingMessage._destroy`),
 * and so does fetch, so the next request opens a new connection: a TCP handshake (and a TLS
 * one over https) before it can be sent, a round trip or two of the remote's latency on every
 * request. Measured at a proxy in front of Apache mod_dav: a write of 1,000 files opened 2,002
 * connections for 2,049 requests, one a request (docs/performance.md, latency row).
 *
 * Never throws: a body that fails while being read is the same as one read (the request's
 * answer was already taken); its stream's own idle limit (remote/body-guard.ts) ends a stall.
 */
export async function discardBody(response: Response, limit = 64 * 1024): Promise<void> {
  // the answer's own Node stream where it came over node:http (node-answer.ts), without making its web stream
  if (!holdsNodeBody(response) && (!response.body || response.body.locked)) return;
  const body = bodyStream(response);
  let read = 0;
  try {
    for await (const chunk of body) {
      read += (chunk as Uint8Array).byteLength;
      if (read > limit) {
        // a long answer: a new connection costs less than reading it
        body.destroy();
        return;
      }
    }
  } catch {
    // the body failed or was cut: nothing of it was wanted
  }
}
