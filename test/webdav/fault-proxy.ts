import http from 'node:http';
import { ERROR_SHAPES, type FaultPlan } from '../emulators/shared/faults.js';
import { closeServers, listenOnLoopback } from '../emulators/shared/http.js';

/**
 * A transparent HTTP proxy in front of the real Apache WebDAV server, with a FaultPlan
 * (server name 'dav') between the client and Apache: the faults of a flaky network or of a
 * front proxy, while every answer that gets through is Apache's own. `Destination` (MOVE,
 * COPY) is rewritten to Apache's origin, as a reverse proxy must for mod_dav to accept it.
 */
export interface ProxyOptions {
  /**
   * Cut every PUT after this many request-body bytes have been passed on to the server: the
   * server has received part of the file when the connection drops (unlike the FaultPlan's
   * `reset-upload`, which never lets the request reach it).
   */
  cutPutsAfterBytes?: number;
  /**
   * Whether to lose the server's answer to this request: the request reaches the server and is
   * carried out, then the client's connection is dropped instead of answering (an answer lost
   * on the way back, after the request landed).
   */
  loseAnswer?(method: string, path: string): boolean;
  /** rewrites the server's answer to a request with this method (its body as text), as another server would have answered */
  rewriteAnswer?: { method: string; rewrite(body: string): string };
  /**
   * sees each exchange that got an answer: what Ferry sent and what the server said, and when,
   * on one count of events at the proxy (`arrived`: the request reached it; `answered`: the
   * server's answer did, so the server had done what was asked)
   */
  onExchange?(exchange: { method: string; path: string; headers: http.IncomingHttpHeaders; status: number; responseHeaders: http.IncomingHttpHeaders; arrived: number; answered: number }): void;
}

export interface FaultProxy {
  /** the same DAV root as upstream, on the proxy's origin */
  url: string;
  close(): Promise<void>;
}

export async function startWebdavFaultProxy(upstreamUrl: string, plan: FaultPlan, options: ProxyOptions = {}): Promise<FaultProxy> {
  const upstream = new URL(upstreamUrl);
  let proxyOrigin = '';
  const agent = new http.Agent({ keepAlive: false });
  let events = 0;
  const server = http.createServer((req, res) => {
    const arrived = ++events;
    const headers: Record<string, string | string[] | undefined> = { ...req.headers, host: upstream.host };
    const destination = req.headers.destination;
    if (typeof destination === 'string' && destination.startsWith(proxyOrigin)) headers.destination = upstream.origin + destination.slice(proxyOrigin.length);
    const forward = http.request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers, agent }, (answer) => {
      options.onExchange?.({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, status: answer.statusCode ?? 0, responseHeaders: answer.headers, arrived, answered: ++events });
      if (options.loseAnswer?.(req.method ?? '', req.url ?? '')) {
        answer.resume();
        answer.on('end', () => req.socket.destroy());
        return;
      }
      const rewriting = options.rewriteAnswer;
      if (rewriting && rewriting.method === req.method) {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => {
          const body = Buffer.from(rewriting.rewrite(Buffer.concat(chunks).toString('utf8')));
          const { 'transfer-encoding': _chunked, ...headers } = answer.headers;
          res.writeHead(answer.statusCode ?? 502, { ...headers, 'content-length': String(body.length) });
          res.end(body);
        });
        return;
      }
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    const cut = options.cutPutsAfterBytes;
    if (cut !== undefined && req.method === 'PUT') {
      let seen = 0;
      let cutting = false;
      req.on('data', (chunk: Buffer) => {
        seen += chunk.length;
        if (seen < cut || cutting) return;
        cutting = true;
        // pass on nothing more; let what was passed on reach the server, then drop both connections
        req.unpipe(forward);
        req.pause();
        setTimeout(() => {
          forward.destroy();
          req.socket.destroy();
        }, 100);
      });
    }
    forward.on('error', () => res.destroy());
    req.on('aborted', () => forward.destroy());
    res.on('close', () => forward.destroy());
    req.pipe(forward);
  });
  plan.install(server, 'dav', ERROR_SHAPES.apache);
  proxyOrigin = await listenOnLoopback(server);
  return {
    url: `${proxyOrigin}${upstream.pathname}`,
    close: async () => {
      await closeServers(server);
      agent.destroy();
    },
  };
}
