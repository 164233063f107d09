import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { FerryError, notFound } from '../../errors.js';

// rclone's remote control API (`rclone rcd`), as documented at rclone.org/rc/: every command
// is `POST /<command>` with a JSON object in and a JSON object out; an error is a non-2xx
// status with `{"error": "...", "input": {...}, "status": N, "path": "<command>"}`. With
// `--rc-serve` the same listener serves a remote's objects at `GET /[<fs>]/<path>`.
// Basic auth with a user and password of Ferry's making (rcd-process.ts), or the ones of a
// remote engine the user set up; they never appear in a message.

export interface RcEndpoint {
  /** the rcd's base URL, ending in '/' */
  url: string;
  user: string;
  password: string;
}

/** One entry of `operations/list` and `operations/stat` (rclone's ListJSON item). */
export interface RcItem {
  Path: string;
  Name: string;
  /** -1 for directories and objects of unknown size */
  Size: number;
  MimeType?: string;
  ModTime: string;
  IsDir: boolean;
  /** lowercase hex by rclone's hash name, when asked for with showHash */
  Hashes?: Record<string, string>;
}

/**
 * An rc error as rclone states it. `status` is rclone's own HTTP status: 404 for
 * "object not found" / "directory not found" (fs.ErrorObjectNotFound, fs.ErrorDirNotFound),
 * 400 for bad parameters, 500 for everything else.
 */
export class RcError extends Error {
  constructor(
    readonly status: number,
    readonly rcloneMessage: string,
  ) {
    super(rcloneMessage);
    this.name = 'RcError';
  }
}

export class RcClient {
  private readonly authorization: string;

  constructor(readonly endpoint: RcEndpoint) {
    this.authorization = `Basic ${Buffer.from(`${endpoint.user}:${endpoint.password}`).toString('base64')}`;
  }

  /** Calls `command` with `params`; throws RcError for an rc error, FerryError when rclone cannot be reached. */
  async call<T>(command: string, params: Record<string, unknown>, signal?: AbortSignal): Promise<T> {
    const response = await this.fetch(command, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(params),
      signal,
    });
    return (await this.answer(response)) as T;
  }

  /**
   * The bytes of one object, streamed (rcd's `--rc-serve`). `fs` is a remote ("hpc:") or a
   * connection string; `remotePath` is '/'-separated below it. Brackets and every other
   * special character are percent-encoded, segment by segment.
   */
  async openObject(fs: string, remotePath: string, signal?: AbortSignal): Promise<Readable> {
    const pathname = `${encodeURIComponent(`[${fs}]`)}/${remotePath.split('/').map(encodeURIComponent).join('/')}`;
    const response = await this.fetch(pathname, { method: 'GET', signal });
    if (!response.ok || !response.body) {
      await this.answer(response);
      throw new RcError(response.status, `rclone answered HTTP ${response.status} for an object read`);
    }
    return Readable.fromWeb(response.body as unknown as WebReadableStream<Uint8Array>);
  }

  /**
   * `operations/uploadfile`: writes `bytes` as `name` in folder `dir` of `fs`, streamed as
   * one multipart/form-data part (rclone reads the part's filename as the object's name).
   */
  async uploadFile(fs: string, dir: string, name: string, bytes: AsyncIterable<Uint8Array>, signal?: AbortSignal): Promise<void> {
    const boundary = `ferry-${Math.random().toString(36).slice(2)}${Date.now().toString(36)}`;
    // RFC 7578 §4.2: the filename as a quoted string; '"' and '\' escaped, CR/LF cannot occur in a name Ferry writes
    const quoted = name.replace(/["\\]/g, (character) => `\\${character}`);
    const head = Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="file0"; filename="${quoted}"\r\ncontent-type: application/octet-stream\r\n\r\n`);
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    async function* body(): AsyncGenerator<Uint8Array> {
      yield head;
      yield* bytes;
      yield tail;
    }
    const query = new URLSearchParams({ fs, remote: dir });
    const response = await this.fetch(`operations/uploadfile?${query}`, {
      method: 'POST',
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      body: body() as unknown as RequestInit['body'],
      duplex: 'half',
      signal,
    } as RequestInit);
    await this.answer(response);
  }

  private async fetch(pathname: string, init: RequestInit): Promise<Response> {
    try {
      return await fetch(new URL(pathname, this.endpoint.url), { ...init, headers: { ...(init.headers as Record<string, string>), authorization: this.authorization } });
    } catch (error) {
      if (init.signal?.aborted) throw error;
      throw new FerryError(503, 'upstream_unavailable', 'rclone is not answering: its remote control (rclone rcd) stopped or cannot be reached. Restart Ferry, or check the remote engine\'s address.');
    }
  }

  private async answer(response: Response): Promise<unknown> {
    const text = await response.text();
    let parsed: unknown = null;
    try {
      parsed = text === '' ? {} : JSON.parse(text);
    } catch {
      parsed = null;
    }
    if (response.ok && parsed !== null) return parsed;
    if (response.status === 401 || response.status === 403) {
      throw new FerryError(502, 'upstream_error', 'rclone refused Ferry\'s credentials for its remote control; for a remote engine, check its user and password.');
    }
    const message = typeof (parsed as { error?: unknown } | null)?.error === 'string' ? (parsed as { error: string }).error : `HTTP ${response.status}`;
    throw new RcError(response.status, message);
  }
}

/** rclone's not-found errors: the object or directory is not there. */
export function isRcNotFound(error: unknown): boolean {
  return error instanceof RcError && (error.status === 404 || /\b(object|directory) not found\b/i.test(error.rcloneMessage));
}

/**
 * An RcError as a sentence a person can act on. rclone's own text names paths on the
 * remote; for a remote on this machine (the local backend) those are paths of this
 * machine, so each of `roots` (the remote's root as rclone prints it, its connection
 * string) is replaced by the remote's name before the text goes anywhere.
 */
export function rcFailure(error: unknown, doing: string, remoteName: string, roots: { name: string; root: string | null }[]): unknown {
  if (!(error instanceof RcError)) return error;
  if (isRcNotFound(error)) return notFound(`Nothing is at that place on the rclone remote '${remoteName}' any more (${doing}); refresh the listing.`);
  return new FerryError(502, 'upstream_error', `rclone could not ${doing} on the remote '${remoteName}': ${scrubPaths(error.rcloneMessage, roots)}`);
}

/**
 * rclone's text with each remote's root (a path of this machine, for the local backend)
 * shown as `<remote>:`, and any other absolute path cut to its last segment.
 */
export function scrubPaths(text: string, remotes: { name: string; root: string | null }[]): string {
  let said = text;
  for (const { name, root } of remotes) if (root) said = said.split(`${root}/`).join(`${name}:`).split(root).join(`${name}:`);
  return said.replace(/(^|[\s"'(])\/(?:[^\s"')]+\/)+/g, '$1…/');
}
