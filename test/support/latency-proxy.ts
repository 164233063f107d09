import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { closeServers, listenOnLoopback } from '../emulators/shared/http.js';
import { Latency } from '../emulators/shared/latency.js';

/**
 * A loopback HTTP proxy that holds every request `latency.ms` before passing it on to
 * `upstream` (a real server that has no latency option: Apache mod_dav), then streams the
 * answer back as it comes. Request and answer go through unchanged (bodies, status, headers)
 * but for Host and a WebDAV MOVE's Destination, which name the server's own origin (mod_dav
 * refuses a Destination on another port); the server's hrefs are paths, valid through the
 * proxy's origin. The Latency
 * counts the requests and the most under way at once, as it does in front of an emulator.
 */
export interface LatencyProxy {
  url: string;
  latency: Latency;
  close(): Promise<void>;
}

export async function startLatencyProxy(upstream: string, latency: Latency): Promise<LatencyProxy> {
  const target = new URL(upstream);
  // one connection per request in flight, kept for the next: the proxy adds the delay, not handshakes
  const agent = new http.Agent({ keepAlive: true });
  let origin = '';
  const server = http.createServer((req: IncomingMessage, res: ServerResponse) => {
    const headers: http.OutgoingHttpHeaders = { ...req.headers, host: target.host };
    const destination = req.headers.destination;
    if (typeof destination === 'string') headers.destination = destination.replace(origin, target.origin);
    const forwarded = http.request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers, agent },
      (answer) => {
        // hop-by-hop headers are the proxy's own (RFC 9110 §7.6.1): Apache's `Keep-Alive: max=`
        // counts down its connection to the proxy, and its `Connection: close` at the end would
        // otherwise close the client's connection to the proxy as well
        const { connection: _connection, 'keep-alive': _keepAlive, ...endToEnd } = answer.headers;
        res.writeHead(answer.statusCode ?? 502, answer.statusMessage, endToEnd);
        answer.pipe(res);
      },
    );
    forwarded.on('error', () => res.destroy());
    req.pipe(forwarded);
  });
  latency.install(server);
  const base = await listenOnLoopback(server);
  origin = base;
  return {
    url: `${base}${target.pathname}`,
    latency,
    close: async () => {
      await closeServers(server);
      agent.destroy();
    },
  };
}
