import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { GitHttpRequest, GitHttpResponse, HttpClient } from 'isomorphic-git';
import { CancelledError, FerryError, forbidden, notFound, unauthorized } from '../../errors.js';
import { Watchdog } from '../../remote/body-guard.js';
import { derivedSignal } from '../../remote/retry-notice.js';

/**
 * The one HTTP path to a git host's smart-HTTP endpoints (gitprotocol-http), for pushes and for
 * isomorphic-git's fetches alike. Policy, in one place:
 *
 * | what                | rule                                                                          |
 * |---------------------|-------------------------------------------------------------------------------|
 * | credentials         | HTTP Basic, sent only to the repository URL's own origin (scheme, host, port) |
 * | redirects           | never followed: a git host that moves a repository says so; Ferry tells the person the new address instead of sending the token there |
 * | timeout             | `timeoutMs` without progress: no byte of the request body taken and no answer yet (a pack of any size may take as long as it needs while it moves); the job's signal ends everything |
 * | retries             | none here: a push is one POST that must not be repeated blindly (see push)    |
 * | user agent          | starts with "git/": some hosts serve the smart protocol only to git clients    |
 */
export interface GitEndpoint {
  /** the repository URL, e.g. https://github.com/owner/name.git (no trailing slash) */
  url: string;
  username: string;
  /** the token or password; never logged and never part of a message */
  password: string;
  /** names the host in messages: "GitHub", "GitLab", "the git server" */
  service: string;
  /** what a 404 means to a person (the host's own wording of "no such repository or no access") */
  notFoundHint?: string;
}

export const GIT_USER_AGENT = 'git/2.39.5 (Ferry; isomorphic-git)';

export class GitHttp {
  readonly origin: string;

  constructor(
    readonly endpoint: GitEndpoint,
    readonly signal: AbortSignal,
    private readonly timeoutMs = 60_000,
  ) {
    this.origin = new URL(endpoint.url).origin;
  }

  /** `path` below the repository URL, e.g. "info/refs?service=git-receive-pack". */
  request(path: string, init: { method?: string; headers?: Record<string, string>; body?: AsyncIterable<Uint8Array> } = {}): Promise<Response> {
    return this.send(`${this.endpoint.url.replace(/\/+$/, '')}/${path}`, init);
  }

  async send(url: string, init: { method?: string; headers?: Record<string, string>; body?: AsyncIterable<Uint8Array> } = {}): Promise<Response> {
    if (new URL(url).origin !== this.origin) {
      throw new FerryError(502, 'upstream_error', `${this.endpoint.service} pointed Ferry to another host (${new URL(url).host}); Ferry sends the token only to ${new URL(this.origin).host}, so nothing was sent there.`);
    }
    if (this.signal.aborted) throw new CancelledError();
    const idle = new Watchdog(this.timeoutMs);
    idle.start();
    const headers: Record<string, string> = {
      'user-agent': GIT_USER_AGENT,
      ...init.headers,
      authorization: `Basic ${Buffer.from(`${this.endpoint.username}:${this.endpoint.password}`).toString('base64')}`,
    };
    let response: Response;
    try {
      response = await fetch(url, {
        method: init.method ?? 'GET',
        headers,
        redirect: 'manual',
        signal: derivedSignal(this.signal, idle.signal),
        ...(init.body ? { body: Readable.toWeb(Readable.from(touching(init.body, idle))) as unknown as ReadableStream<Uint8Array>, duplex: 'half' } : {}),
      } as RequestInit);
    } catch (error) {
      idle.stop();
      if (this.signal.aborted) throw new CancelledError();
      if (error instanceof FerryError) throw error;
      // a FerryError thrown while the body was produced (a file changed) is the cause
      const cause = (error as { cause?: unknown }).cause;
      if (cause instanceof FerryError) throw cause;
      if (idle.fired) throw new FerryError(504, 'upstream_unavailable', `${this.endpoint.service} did not answer within ${Math.round(this.timeoutMs / 1000)} s; try again later.`);
      throw new FerryError(502, 'upstream_unavailable', `${this.endpoint.service} could not be reached (${(error as Error).message}).`);
    }
    idle.stop();
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel();
      const where = response.headers.get('location') ?? 'another address';
      throw new FerryError(502, 'upstream_error', `${this.endpoint.service} says the repository has moved (to ${where}); change the repository URL and try again.`);
    }
    if (response.status === 401) {
      await response.body?.cancel();
      throw unauthorized(`${this.endpoint.service} refused the credentials for ${this.endpoint.url}; check the token (or username and password).`);
    }
    if (response.status === 403) {
      await response.body?.cancel();
      throw forbidden(`${this.endpoint.service} does not let this token ${/receive-pack/.test(url) ? 'push to' : 'read'} ${this.endpoint.url}; it needs write access to push.`);
    }
    if (response.status === 404) {
      await response.body?.cancel();
      throw notFound(this.endpoint.notFoundHint ?? `${this.endpoint.service} has no repository at ${this.endpoint.url}, or the token cannot see it.`);
    }
    if (response.status === 429 || response.status === 503) {
      await response.body?.cancel();
      const seconds = Number(response.headers.get('retry-after') ?? '') || undefined;
      throw new FerryError(response.status, response.status === 429 ? 'rate_limited' : 'upstream_unavailable', `${this.endpoint.service} is busy (HTTP ${response.status}); try again${seconds ? ` in about ${seconds} s` : ' later'}.`, seconds);
    }
    if (response.status >= 400) {
      const said = (await response.text().catch(() => '')).slice(0, 200).trim();
      throw new FerryError(502, 'upstream_error', `${this.endpoint.service} answered HTTP ${response.status}${said ? ` (${said})` : ''}; try again later.`);
    }
    return response;
  }

  /** isomorphic-git's HttpClient over the same policy. */
  client(): HttpClient {
    return {
      request: async (request: GitHttpRequest): Promise<GitHttpResponse> => {
        const response = await this.send(request.url, {
          method: request.method ?? 'GET',
          headers: withoutAuth(request.headers ?? {}),
          ...(request.body ? { body: request.body as AsyncIterable<Uint8Array> } : {}),
        });
        const headers: Record<string, string> = {};
        response.headers.forEach((value, key) => (headers[key] = value));
        const body = response.body ? Readable.fromWeb(response.body as unknown as WebReadableStream<Uint8Array>) : Readable.from([]);
        return { url: response.url || request.url, method: request.method ?? 'GET', statusCode: response.status, statusMessage: response.statusText, headers, body: body[Symbol.asyncIterator]() as AsyncIterableIterator<Uint8Array> };
      },
    };
  }
}

async function* touching(body: AsyncIterable<Uint8Array>, idle: Watchdog): AsyncGenerator<Uint8Array> {
  for await (const chunk of body) {
    idle.touch();
    yield chunk;
  }
  idle.touch();
}

function withoutAuth(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([key]) => key.toLowerCase() !== 'authorization'));
}
