import type { IncomingMessage, Server, ServerResponse } from 'node:http';

/**
 * Fault injection for the service emulators: the failures real remotes show, played in front
 * of the emulator's own handler (which stays the faithful model of the service).
 *
 * - `status`: the service answers `status` in its own error shape (see ERROR_SHAPES) with
 *   `Retry-After` as that service sends it; the request never reaches the service.
 * - `reset`: the connection is dropped before anything is answered (the request did nothing).
 * - `reset-upload`: `afterBytes` of the request body are read, then the connection is dropped.
 * - `reset-after-landing`: the service handles the request in full (it *landed*), then the
 *   connection is dropped before the answer leaves: the client cannot know it worked.
 * - `reset-download`: the service answers; the connection drops after `afterBytes` of the body.
 * - `stall`: the request is read and never answered.
 * - `stall-body`: the service's headers and `afterBytes` of its body go out, then nothing.
 * - `corrupt`: the body arrives whole, same length, one byte changed (at `afterBytes`): the
 *   bytes no longer match the hash the service advertises for them.
 *
 * Rules match by server name, method and path; each fires `times` times (default 1). A seeded
 * random schedule (`randomly`) drives the long stress runs. Every fault fired is logged.
 */
export type FaultKind = 'status' | 'reset' | 'reset-upload' | 'reset-after-landing' | 'reset-download' | 'stall' | 'stall-body' | 'corrupt';

export interface FaultRule {
  kind: FaultKind;
  /** the emulator's name for one of its servers ('api', 'files', 'upload', ...); any if unset */
  server?: string;
  method?: string;
  /** a substring of the path, or a pattern tested against the whole request URL */
  path?: string | RegExp;
  /** for `status` */
  status?: number;
  /** for `status`: seconds (a number) or the header's exact text (an HTTP date) */
  retryAfter?: number | string;
  /** for mid-body faults: bytes let through first (default: half of what there is, at least 1) */
  afterBytes?: number;
  /** how many matching requests the rule hits (default 1; Infinity for every one) */
  times?: number;
}

export interface InjectedFault {
  kind: FaultKind;
  server: string;
  method: string;
  url: string;
  status?: number;
}

/** The error answer a service gives for `status`: its headers and body, as it sends them. */
export type ErrorShape = (status: number, retryAfter: number | string | undefined) => { headers: Record<string, string>; body: string };

export interface RandomSchedule {
  seed: number;
  /** chance that a matching request gets a fault */
  probability: number;
  /** the faults to draw from (equal odds) */
  faults: Omit<FaultRule, 'times'>[];
  /** which requests may be hit (all when unset) */
  match?: Pick<FaultRule, 'server' | 'method' | 'path'>;
}

export class FaultPlan {
  readonly injected: InjectedFault[] = [];
  private readonly rules: FaultRule[] = [];
  private schedule: (RandomSchedule & { next: () => number }) | null = null;

  add(rule: FaultRule): this {
    this.rules.push({ times: 1, ...rule });
    return this;
  }

  /** Faults at random (seeded, so a failing run can be replayed) on top of the fixed rules. */
  randomly(schedule: RandomSchedule): this {
    this.schedule = { ...schedule, next: mulberry32(schedule.seed) };
    return this;
  }

  clear(): void {
    this.rules.length = 0;
    this.schedule = null;
  }

  /** Rules not yet used up (a test can check every planned fault fired). */
  get pending(): FaultRule[] {
    return this.rules.filter((rule) => (rule.times ?? 1) > 0);
  }

  count(kind?: FaultKind): number {
    return kind ? this.injected.filter((f) => f.kind === kind).length : this.injected.length;
  }

  /**
   * Puts the plan in front of every request `server` receives; `shape` is how that server
   * writes an error (ERROR_SHAPES.<service>).
   */
  install(server: Server, name: string, shape: ErrorShape): void {
    const handlers = server.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[];
    server.removeAllListeners('request');
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      const serve = () => handlers.forEach((handler) => handler.call(server, req, res));
      const rule = this.take(name, req);
      if (!rule) return serve();
      this.injected.push({ kind: rule.kind, server: name, method: req.method ?? 'GET', url: req.url ?? '/', ...(rule.kind === 'status' ? { status: rule.status } : {}) });
      this.play(rule, shape, req, res, serve);
    });
  }

  private take(server: string, req: IncomingMessage): FaultRule | null {
    const method = req.method ?? 'GET';
    const url = req.url ?? '/';
    const matches = (rule: Pick<FaultRule, 'server' | 'method' | 'path'>) =>
      (!rule.server || rule.server === server) &&
      (!rule.method || rule.method.toUpperCase() === method) &&
      (rule.path === undefined || (typeof rule.path === 'string' ? url.split('?')[0]!.includes(rule.path) : rule.path.test(url)));
    const rule = this.rules.find((r) => (r.times ?? 1) > 0 && matches(r));
    if (rule) {
      rule.times = (rule.times ?? 1) - 1;
      return rule;
    }
    const schedule = this.schedule;
    if (schedule && (!schedule.match || matches(schedule.match)) && schedule.next() < schedule.probability) {
      return { ...schedule.faults[Math.floor(schedule.next() * schedule.faults.length)]!, times: 0 };
    }
    return null;
  }

  private play(rule: FaultRule, shape: ErrorShape, req: IncomingMessage, res: ServerResponse, serve: () => void): void {
    const socket = req.socket;
    switch (rule.kind) {
      case 'status': {
        req.resume();
        req.once('end', () => {
          const { headers, body } = shape(rule.status ?? 503, rule.retryAfter);
          res.writeHead(rule.status ?? 503, { ...headers, 'content-length': String(Buffer.byteLength(body)) });
          res.end(req.method === 'HEAD' ? undefined : body);
        });
        return;
      }
      case 'reset':
        socket.destroy();
        return;
      case 'reset-upload': {
        let seen = 0;
        const limit = rule.afterBytes ?? 1;
        req.on('data', (chunk: Buffer) => {
          seen += chunk.length;
          if (seen >= limit) socket.destroy();
        });
        req.once('end', () => socket.destroy());
        return;
      }
      case 'stall':
        // read what is sent (so an upload is not merely slowed) and never answer
        req.resume();
        return;
      case 'reset-after-landing':
        interceptBody(res, () => {
          socket.destroy();
          return 'drop';
        });
        serve();
        return;
      case 'reset-download':
      case 'stall-body':
      case 'corrupt': {
        let passed = 0;
        let at: number | null = null;
        interceptBody(res, (chunk, total) => {
          // half of the declared length, or of the first chunk when none is declared
          at ??= rule.afterBytes ?? Math.max(1, Math.floor((total ?? chunk.length) / 2));
          if (rule.kind === 'corrupt') {
            const offset = at - passed;
            if (offset >= 0 && offset < chunk.length) {
              chunk = Buffer.from(chunk);
              chunk[offset] = chunk[offset]! ^ 0xff;
            }
            passed += chunk.length;
            return chunk;
          }
          if (passed >= at) return 'drop';
          const keep = chunk.subarray(0, at - passed);
          passed += keep.length;
          if (passed < at) return keep;
          return { last: keep, then: () => (rule.kind === 'reset-download' ? socket.destroy() : undefined) };
        });
        serve();
        return;
      }
    }
  }
}

type ChunkDecision = Buffer | 'drop' | { last: Buffer; then: () => void };

/**
 * Routes every body byte the handler writes through `decide` (which may change, cut or drop
 * it). A handler that ends after a cut is never told: its answer simply stops.
 */
function interceptBody(res: ServerResponse, decide: (chunk: Buffer, declaredLength: number | null) => ChunkDecision): void {
  const write = res.write.bind(res) as (chunk: Buffer, cb?: () => void) => boolean;
  const end = res.end.bind(res) as (chunk?: Buffer) => ServerResponse;
  let cut = false;
  let headersOnly = true;
  const declared = () => {
    const value = res.getHeader('content-length');
    return value === undefined ? null : Number(value);
  };
  const pass = (raw: unknown, encoding: unknown): boolean => {
    if (cut) return true;
    if (raw === undefined || raw === null || (typeof raw !== 'string' && !Buffer.isBuffer(raw) && !(raw instanceof Uint8Array))) return true;
    const chunk = typeof raw === 'string' ? Buffer.from(raw, (typeof encoding === 'string' ? encoding : 'utf8') as BufferEncoding) : Buffer.from(raw as Uint8Array);
    if (chunk.length === 0) return true;
    headersOnly = false;
    const decision = decide(chunk, declared());
    if (decision === 'drop') {
      cut = true;
      return true;
    }
    if (Buffer.isBuffer(decision)) return write(decision);
    cut = true;
    if (decision.last.length > 0) write(decision.last, decision.then);
    else {
      if (!res.headersSent) res.flushHeaders();
      setImmediate(decision.then);
    }
    return true;
  };
  (res as { write: unknown }).write = (chunk: unknown, encoding?: unknown, cb?: unknown) => {
    const ok = pass(chunk, encoding);
    const callback = typeof encoding === 'function' ? encoding : cb;
    if (typeof callback === 'function') setImmediate(callback as () => void);
    return ok;
  };
  (res as { end: unknown }).end = (chunk?: unknown, encoding?: unknown, cb?: unknown) => {
    if (typeof chunk !== 'function') pass(chunk, encoding);
    if (!cut && headersOnly) {
      // an answer without a body: the decision still applies (a reset after the request landed)
      const decision = decide(Buffer.alloc(0), declared());
      if (decision === 'drop') cut = true;
      else if (!Buffer.isBuffer(decision)) {
        cut = true;
        res.flushHeaders();
        setImmediate(decision.then);
      }
    }
    if (!cut) end();
    const callback = [chunk, encoding, cb].find((x) => typeof x === 'function') as (() => void) | undefined;
    if (callback) setImmediate(callback);
    return res;
  };
}

/** A small seeded PRNG (mulberry32): the same seed, the same schedule. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const retryAfterHeader = (retryAfter: number | string | undefined): Record<string, string> => (retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) });
const seconds = (retryAfter: number | string | undefined) => (typeof retryAfter === 'number' ? retryAfter : 1);
const epochIn = (s: number) => String(Math.floor(Date.now() / 1000) + Math.ceil(s));
const json = (headers: Record<string, string>, body: unknown, type = 'application/json') => ({ headers: { 'content-type': type, ...headers }, body: JSON.stringify(body) });
const html = (status: number, text: string, headers: Record<string, string> = {}) => ({
  headers: { 'content-type': 'text/html', ...headers },
  body: `<html>\r\n<head><title>${status} ${text}</title></head>\r\n<body>\r\n<center><h1>${status} ${text}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n`,
});
const REASONS: Record<number, string> = { 429: 'Too Many Requests', 500: 'Internal Server Error', 502: 'Bad Gateway', 503: 'Service Unavailable', 504: 'Gateway Time-out' };

/**
 * How each service writes the errors the fault layer plays (reference/osf.md §4-5,
 * reference/remote-targets.md "Rate limits"): gateway errors (502/504) come from the front
 * proxy as HTML; the application's own 500/503/429 in its own envelope.
 */
export const ERROR_SHAPES = {
  /** OSF API v2 (DRF): JSON:API errors; 429 "Request was throttled" with Retry-After seconds */
  osfApi: ((status, retryAfter) => {
    if (status === 502 || status === 504) return html(status, REASONS[status]!);
    const detail = status === 429 ? `Request was throttled. Expected available in ${seconds(retryAfter)} seconds.` : REASONS[status] ?? `Error ${status}`;
    return json(retryAfterHeader(retryAfter), { errors: [{ detail }], meta: { version: '2.20' } }, 'application/vnd.api+json; charset=utf-8');
  }) as ErrorShape,
  /** WaterButler: `{code, message}`; its 429 names the rate-limit window */
  waterbutler: ((status, retryAfter) => {
    if (status === 502 || status === 504) return html(status, REASONS[status]!);
    if (status === 429) {
      return json({ ...retryAfterHeader(retryAfter), 'x-waterbutler-ratelimiting-window': '3600' }, { error: 'API rate-limiting active due to too many requests', headers: retryAfterHeader(retryAfter) });
    }
    return json(retryAfterHeader(retryAfter), { code: status, message: REASONS[status] ?? `Error ${status}` });
  }) as ErrorShape,
  /** a signed-storage host (GCS-like): XML errors */
  storage: ((status, retryAfter) => ({
    headers: { 'content-type': 'application/xml; charset=UTF-8', ...retryAfterHeader(retryAfter) },
    body: `<?xml version='1.0' encoding='UTF-8'?><Error><Code>${status === 429 ? 'SlowDown' : 'InternalError'}</Code><Message>${REASONS[status] ?? status}</Message></Error>`,
  })) as ErrorShape,
  /** GitHub: `{message, documentation_url}`; 429 is a secondary rate limit with retry-after */
  github: ((status, retryAfter) => {
    const rate = { 'x-ratelimit-limit': '5000', 'x-ratelimit-remaining': '4990', 'x-ratelimit-used': '10', 'x-ratelimit-reset': epochIn(3600), 'x-ratelimit-resource': 'core' };
    if (status === 429) {
      return json({ ...rate, ...retryAfterHeader(retryAfter) }, {
        message: 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.',
        documentation_url: 'https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-secondary-rate-limits',
      }, 'application/json; charset=utf-8');
    }
    if (status === 502 || status === 504) return json({ ...rate, ...retryAfterHeader(retryAfter) }, { message: 'Server Error' }, 'application/json; charset=utf-8');
    return json({ ...rate, ...retryAfterHeader(retryAfter) }, { message: status === 503 ? 'Service Unavailable' : 'Server Error', documentation_url: 'https://docs.github.com/rest' }, 'application/json; charset=utf-8');
  }) as ErrorShape,
  /** GitLab (Rack::Attack): 429 plain-text "Retry later", RateLimit-* with Reset as an epoch */
  gitlab: ((status, retryAfter) => {
    if (status === 429) {
      const s = seconds(retryAfter);
      return {
        headers: {
          'content-type': 'text/plain',
          'ratelimit-name': 'throttle_authenticated_api',
          'ratelimit-limit': '2000',
          'ratelimit-observed': '2000',
          'ratelimit-remaining': '0',
          'ratelimit-reset': epochIn(s),
          'ratelimit-resettime': new Date(Date.now() + s * 1000).toUTCString(),
          ...retryAfterHeader(retryAfter),
        },
        body: 'Retry later\n',
      };
    }
    if (status === 502 || status === 504) return html(status, REASONS[status]!, retryAfterHeader(retryAfter));
    return json(retryAfterHeader(retryAfter), { message: `${status} ${REASONS[status] ?? 'Error'}` });
  }) as ErrorShape,
  /** Zenodo (InvenioRDM): `{message, status}`; X-RateLimit-* on 429 */
  zenodo: ((status, retryAfter) => {
    if (status === 502 || status === 504) return html(status, REASONS[status]!);
    const headers: Record<string, string> = status === 429 ? { 'x-ratelimit-limit': '100', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': epochIn(seconds(retryAfter)) } : {};
    const message = status === 429 ? '429 Too Many Requests: 100 per 1 minute' : status === 503 ? 'Service temporarily unavailable.' : 'Internal server error.';
    return json({ ...headers, ...retryAfterHeader(retryAfter) }, { message, status });
  }) as ErrorShape,
  /** figshare: `{message, code}` */
  figshare: ((status, retryAfter) => {
    if (status === 502 || status === 504) return html(status, REASONS[status]!);
    return json(retryAfterHeader(retryAfter), { message: status === 429 ? 'Too many requests' : 'Unexpected error', code: status === 429 ? 'TooManyRequests' : 'InternalServerError' });
  }) as ErrorShape,
  /** Apache httpd: its own HTML error documents */
  apache: ((status, retryAfter) => ({
    headers: { 'content-type': 'text/html; charset=iso-8859-1', ...retryAfterHeader(retryAfter) },
    body: `<!DOCTYPE HTML PUBLIC "-//IETF//DTD HTML 2.0//EN">\n<html><head>\n<title>${status} ${REASONS[status] ?? ''}</title>\n</head><body>\n<h1>${REASONS[status] ?? 'Error'}</h1>\n</body></html>\n`,
  })) as ErrorShape,
} satisfies Record<string, ErrorShape>;

