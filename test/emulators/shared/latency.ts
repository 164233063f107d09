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
  /** each request received, as `METHOD url`, in the order they arrived */
  arrivals: string[] = [];
  /** requests received and not yet answered */
  underWay = 0;
  /** the most requests under way at once */
  mostUnderWay = 0;
  /**
   * connections the clients opened: a client that keeps its connections alive opens about as
   * many as it keeps requests in flight, one that drops them one a request
   */
  connections = 0;
  /** requests under way × milliseconds, since the last reset: their mean over a run is averageUnderWay */
  private area = 0;
  private since = performance.now();
  private changed = this.since;

  constructor(readonly ms: number) {}

  /** Puts the delay in front of every handler `server` has now (call it after any fault plan, so the delay comes first). */
  install(server: Server): void {
    const handlers = server.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[];
    server.removeAllListeners('request');
    server.on('connection', () => this.connections++);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      this.requests++;
      this.arrivals.push(`${req.method} ${req.url}`);
      this.account();
      this.underWay++;
      this.mostUnderWay = Math.max(this.mostUnderWay, this.underWay);
      let gone = false;
      res.once('close', () => {
        gone = true;
        this.account();
        this.underWay--;
      });
      // a request its client gave up on (a cancel) before the round trip ended never arrives
      setTimeout(() => gone || handlers.forEach((handler) => handler.call(server, req, res)), this.ms);
    });
  }

  /** Starts counting afresh (a new measurement on the same servers). */
  reset(): void {
    this.requests = 0;
    this.arrivals = [];
    this.connections = 0;
    this.mostUnderWay = this.underWay;
    this.area = 0;
    this.since = this.changed = performance.now();
  }

  /** The mean number of requests under way since the last reset: a pipeline that keeps N in flight shows close to N. */
  averageUnderWay(): number {
    this.account();
    const elapsed = this.changed - this.since;
    return elapsed > 0 ? this.area / elapsed : 0;
  }

  /** The mean time a request was under way since the last reset (the added round trip, and the server's own time). */
  meanRequestMs(): number {
    this.account();
    return this.requests > 0 ? this.area / this.requests : 0;
  }

  private account(): void {
    const now = performance.now();
    this.area += this.underWay * (now - this.changed);
    this.changed = now;
  }
}
