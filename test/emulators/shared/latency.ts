import type { IncomingMessage, Server, ServerResponse } from 'node:http';

/**
 * A remote's round trip, played in front of a test server: every request waits `ms` before
 * the server's own handlers see it, so a client that keeps one request in flight at a time
 * pays `ms` for each, and one that keeps N in flight pays it N at a time (issue #18's bench:
 * "each remote target's emulator run with 50 ms of added latency per request"). It counts
 * the requests and the most under way at once (received, not yet answered or cut off), which
 * is what a write pipeline's concurrency shows on the wire. One Latency may sit in front of
 * several servers (an emulator's API and file hosts): it counts them together.
 */
export class Latency {
  /** requests received */
  requests = 0;
  /** requests received and not yet answered */
  underWay = 0;
  /** the most requests under way at once */
  mostUnderWay = 0;

  constructor(readonly ms: number) {}

  /** Puts the delay in front of every handler `server` has now (call it after any fault plan, so the delay comes first). */
  install(server: Server): void {
    const handlers = server.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[];
    server.removeAllListeners('request');
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      this.requests++;
      this.underWay++;
      this.mostUnderWay = Math.max(this.mostUnderWay, this.underWay);
      let gone = false;
      res.once('close', () => {
        gone = true;
        this.underWay--;
      });
      // a request its client gave up on (a cancel) before the round trip ended never arrives
      setTimeout(() => gone || handlers.forEach((handler) => handler.call(server, req, res)), this.ms);
    });
  }

  /** Starts counting afresh (a new measurement on the same servers). */
  reset(): void {
    this.requests = 0;
    this.mostUnderWay = this.underWay;
  }
}
