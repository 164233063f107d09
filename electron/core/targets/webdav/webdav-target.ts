import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { createClient, type FileStat, type ResponseDataDetailed, type WebDAVClient } from 'webdav';
import { CancelledError, FerryError, badRequest, conflict, forbidden, notFound, throwIfAborted, tooLarge, unauthorized } from '../../errors.js';
import { hashStream } from '../../hashing.js';
import { formatDate } from '../../time.js';
import {
  fullActions,
  type Entry,
  type ListScope,
  type ReadResult,
  type ResourceInfo,
  type ResourceNode,
  type Target,
  type TargetContext,
  type TargetInfo,
  type WriteOptions,
  type WriteOutcome,
} from '../../target.js';
import { isPerFileFailure } from '../../remote/file-failure.js';
import { RemoteClient } from '../../remote/http.js';
import { sizeAndMd5 } from '../../remote/spool.js';
import { verifyAdvertised } from '../../remote/advertised-fixity.js';
import { parseWebdavToken, type WebdavCredentials } from './credentials.js';

export interface WebdavTargetOptions {
  /** retries of idempotent requests on 429/5xx and network errors (default 3) */
  retries?: number;
  /** longest Retry-After honoured, ms (default 60 s) */
  maxRetryAfterMs?: number;
  /**
   * per request, ms (default 60 s): the longest wait for an answer; for file bytes (GET, PUT)
   * the longest pause, so a big file is never cut off for its size
   */
  timeoutMs?: number;
  /** requests per second (default 20) */
  ratePerSecond?: number;
}

/** A connection to one account: the `webdav` client for PROPFIND/MKCOL/MOVE, RemoteClient for bytes. */
interface Dav {
  client: WebDAVClient;
  http: RemoteClient;
  credentials: WebdavCredentials;
}

const DAV_MESSAGES = { unauthorized: 'The WebDAV token is invalid or expired: the server refused the username or app password.' };
/** statuses of a GET/PUT the target words itself (toFerryError); the rest are RemoteClient's */
const WORDED_STATUSES = [401, 403, 404, 405, 409, 412, 413, 423, 507];

/**
 * What Ferry asks for in each PROPFIND: the standard properties, plus the ownCloud/Nextcloud
 * ones that carry a stable file id, stored checksums and the creation time. Servers that do
 * not know a property just report it missing.
 */
const PROPFIND_BODY = `<?xml version="1.0" encoding="utf-8"?>
<d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns" xmlns:nc="http://nextcloud.org/ns">
  <d:prop>
    <d:getlastmodified/><d:getcontentlength/><d:getcontenttype/><d:getetag/><d:resourcetype/>
    <oc:fileid/><oc:checksums/><nc:creation_time/>
  </d:prop>
</d:propfind>`;

/** Ids: `w` + base64url of the absolute path below the server URL ('/' root, never in an id). */
export const webdavId = (remotePath: string) => `w${Buffer.from(remotePath, 'utf8').toString('base64url')}`;

export function parseWebdavId(id: string): string {
  const match = /^w([A-Za-z0-9_-]+)$/.exec(id);
  const decoded = match ? Buffer.from(match[1] as string, 'base64url').toString('utf8') : '';
  if (!decoded.startsWith('/') || decoded === '/' || decoded.split('/').some((s) => s === '..' || s === '.')) {
    // Ids are opaque to clients: one this target could never have made simply names nothing (404).
    throw notFound(`There is no WebDAV resource '${id}'; list the target's resources to find one.`);
  }
  return decoded;
}

/**
 * Hashes from Nextcloud/ownCloud `oc:checksums` (`SHA1:<hex> MD5:<hex> ADLER32:<hex>`),
 * present only when the uploader stored them; `getetag` is never a content hash.
 */
export function hashesFromChecksums(value: unknown): Record<string, string> {
  const texts: string[] = [];
  const gather = (v: unknown): void => {
    if (typeof v === 'string') texts.push(v);
    else if (Array.isArray(v)) v.forEach(gather);
    else if (v && typeof v === 'object') Object.values(v).forEach(gather);
  };
  gather(value);
  const hashes: Record<string, string> = {};
  for (const match of texts.join(' ').matchAll(/\b(MD5|SHA1):([0-9a-fA-F]+)/g)) {
    const algorithm = (match[1] as string).toLowerCase();
    const hex = (match[2] as string).toLowerCase();
    if ((algorithm === 'md5' && hex.length === 32) || (algorithm === 'sha1' && hex.length === 40)) hashes[algorithm] = hex;
  }
  return hashes;
}

/**
 * Any WebDAV server (Nextcloud, ownCloud, Apache mod_dav, rclone, ...) through the `webdav`
 * client: folders are containers, files items; the top level is the children of the
 * account's URL. Uploads go to a temporary name in the destination folder and are MOVEd
 * into place, so a reader never sees half a file.
 *
 * `supported_hash_algorithms` lists md5 and sha1 because servers that store checksums
 * (Nextcloud/ownCloud `oc:checksums`) report them; on other servers `hashes` is `{}`.
 */
export class WebdavTarget implements Target {
  readonly info: TargetInfo = {
    name: 'webdav',
    readable_name: 'WebDAV',
    supported_actions: fullActions(true),
    supported_hash_algorithms: ['md5', 'sha1'],
    credential: 'remote',
  };

  private readonly httpClients = new Map<string, RemoteClient>();

  constructor(private readonly options: WebdavTargetOptions = {}) {}

  private connect(ctx: TargetContext): Dav {
    const credentials = parseWebdavToken(ctx.token);
    const client = createClient(credentials.url, { username: credentials.username, password: credentials.password });
    let http = this.httpClients.get(credentials.url);
    if (!http) {
      // one per server, so its request rate is shared by every job that uses it
      http = new RemoteClient({
        baseUrl: credentials.url,
        serviceName: 'The WebDAV server',
        ratePerSecond: this.options.ratePerSecond ?? 20,
        timeoutMs: this.options.timeoutMs,
        retries: this.options.retries ?? 3,
        maxRetryAfterMs: this.options.maxRetryAfterMs ?? 60_000,
        messages: DAV_MESSAGES,
      });
      this.httpClients.set(credentials.url, http);
    }
    return { client, http, credentials };
  }

  /** A GET or PUT of file bytes through RemoteClient (timeouts, retries, clear mid-body errors). */
  private async bytesRequest(ctx: TargetContext, dav: Dav, remotePath: string, options: Parameters<RemoteClient['request']>[1]): Promise<Response> {
    const url = new URL(encodeDavPath(remotePath), dav.http.baseUrl);
    const basic = Buffer.from(`${dav.credentials.username}:${dav.credentials.password}`).toString('base64');
    const response = await dav.http.request(url.toString(), {
      ...options,
      signal: ctx.signal,
      headers: { ...options?.headers, authorization: `Basic ${basic}` },
      allow: WORDED_STATUSES,
    });
    if (response.ok) return response;
    await response.body?.cancel().catch(() => undefined);
    throw toFerryError({ status: response.status, response }, remotePath);
  }

  private async download(ctx: TargetContext, dav: Dav, remotePath: string): Promise<Readable> {
    const response = await this.bytesRequest(ctx, dav, remotePath, { method: 'GET' });
    return response.body ? Readable.fromWeb(response.body as unknown as WebReadableStream) : Readable.from([]);
  }

  async *list(ctx: TargetContext, scope?: ListScope): AsyncIterable<ResourceNode> {
    const dav = this.connect(ctx);
    const start = scope?.container ? parseWebdavId(scope.container) : '/';
    yield* this.walk(ctx, dav, start, scope === undefined);
  }

  private async *walk(ctx: TargetContext, dav: Dav, dir: string, recursive: boolean): AsyncIterable<ResourceNode> {
    for (const stat of await this.children(ctx, dav, dir)) {
      yield nodeOf(stat);
      if (recursive && stat.type === 'directory') yield* this.walk(ctx, dav, stat.filename, true);
    }
  }

  /** One PROPFIND, Depth 1 (servers often refuse `infinity`), sorted by name. */
  private async children(ctx: TargetContext, dav: Dav, dir: string): Promise<FileStat[]> {
    const result = await this.retrying(ctx, dir, (signal) =>
      dav.client.getDirectoryContents(dir, { details: true, data: PROPFIND_BODY, signal }),
    );
    return result.data.filter((stat) => stat.filename !== dir.replace(/\/$/, '')).sort((a, b) => a.basename.localeCompare(b.basename));
  }

  private stat(ctx: TargetContext, dav: Dav, remotePath: string): Promise<FileStat> {
    return this.retrying(ctx, remotePath, async (signal) => {
      const result = (await dav.client.stat(remotePath, { details: true, data: PROPFIND_BODY, signal })) as ResponseDataDetailed<FileStat>;
      return result.data;
    });
  }

  private async statOrNull(ctx: TargetContext, dav: Dav, remotePath: string): Promise<FileStat | null> {
    try {
      return await this.stat(ctx, dav, remotePath);
    } catch (error) {
      if (error instanceof FerryError && error.status === 404) return null;
      throw error;
    }
  }

  async detail(ctx: TargetContext, id: string): Promise<ResourceInfo> {
    const dav = this.connect(ctx);
    const stat = await this.stat(ctx, dav, parseWebdavId(id));
    const props = (stat.props ?? {}) as Record<string, unknown>;
    const created = Number(props.creation_time);
    const modified = stat.lastmod ? new Date(stat.lastmod) : null;
    const isFile = stat.type === 'file';
    return {
      ...nodeOf(stat),
      date_created: Number.isFinite(created) && created > 0 ? formatDate(new Date(created * 1000)) : null,
      date_modified: modified && !Number.isNaN(modified.getTime()) ? formatDate(modified) : null,
      hashes: isFile ? hashesFromChecksums(props.checksums) : {},
      extra: {
        provider: 'webdav',
        materialized_path: stat.filename,
        path: stat.filename,
        ...(isFile ? { size: stat.size, content_type: stat.mime ?? null } : {}),
        etag: stat.etag ?? null,
        file_id: props.fileid ?? null,
      },
    };
  }

  async read(ctx: TargetContext, id: string): Promise<ReadResult> {
    const dav = this.connect(ctx);
    const stat = await this.stat(ctx, dav, parseWebdavId(id));
    const root = nodeOf(stat);
    const title = stat.basename;
    const open = (stat: FileStat) => async (): Promise<Readable> =>
      verifyAdvertised(await this.download(ctx, dav, stat.filename), { hashes: hashesFromChecksums((stat.props as Record<string, unknown> | undefined)?.checksums), size: stat.size }, { service: 'The WebDAV server', path: stat.filename });
    if (stat.type === 'file') {
      const entry = fileEntry(title, stat, open(stat));
      return { title, root, entries: (async function* () { yield entry; })() };
    }
    const children = (dir: string) => this.children(ctx, dav, dir);
    async function* entries(dir: string, prefix: string): AsyncIterable<Entry> {
      for (const child of await children(dir)) {
        const entryPath = `${prefix}/${child.basename}`;
        if (child.type === 'directory') {
          yield folderEntry(entryPath, child);
          yield* entries(child.filename, entryPath);
        } else {
          yield fileEntry(entryPath, child, open(child));
        }
      }
    }
    async function* all(): AsyncIterable<Entry> {
      yield folderEntry(title, stat);
      yield* entries(stat.filename, title);
    }
    return { title, root, entries: all() };
  }

  async write(ctx: TargetContext, containerId: string | null, entries: AsyncIterable<Entry>, options: WriteOptions): Promise<WriteOutcome> {
    const dav = this.connect(ctx);
    const outcome: WriteOutcome = { created: [], updated: [], ignored: [], fileErrors: [] };
    const knownDirs = new Set<string>(['/']);
    let base: string;
    let top: { original: string; actual: string } | null = null;
    if (containerId === null) {
      base = '/';
    } else {
      base = parseWebdavId(containerId);
      const stat = await this.stat(ctx, dav, base);
      if (stat.type !== 'directory') throw badRequest(`'${stat.basename}' is a file; upload into a folder.`);
      knownDirs.add(base);
    }

    for await (const entry of entries) {
      throwIfAborted(options.signal);
      const segments = entry.path.split('/');
      if (segments.some((s) => s === '' || s === '.' || s === '..')) {
        outcome.fileErrors.push({ path: entry.path, error: 'The path has an empty, "." or ".." part.' });
        continue;
      }
      if (containerId === null) {
        if (!top) top = { original: segments[0] as string, actual: await this.newTopFolder(ctx, dav, segments[0] as string, knownDirs) };
        if (segments[0] !== top.original) throw badRequest(`A new top-level folder is made from one top folder; '${entry.path}' is outside '${top.original}'.`);
        segments[0] = top.actual;
      }
      const destination = path.posix.join(base, ...segments);
      try {
        if (entry.kind === 'folder') {
          await this.ensureDir(ctx, dav, destination, knownDirs);
          continue;
        }
        await this.ensureDir(ctx, dav, path.posix.dirname(destination), knownDirs);
        await this.writeFile(ctx, dav, entry, destination, options, outcome);
      } catch (error) {
        if (!isPerFileFailure(error, options.signal)) throw error;
        outcome.fileErrors.push({ path: entry.path, error: error.message });
      }
    }
    if (containerId === null) {
      if (!top) throw badRequest('The upload holds nothing: a new top-level folder needs one top folder.');
      outcome.newResource = { id: webdavId(`/${top.actual}`), title: top.actual };
    }
    return outcome;
  }

  private async newTopFolder(ctx: TargetContext, dav: Dav, wanted: string, knownDirs: Set<string>): Promise<string> {
    const taken = new Set((await this.children(ctx, dav, '/')).map((stat) => stat.basename));
    let name = wanted;
    for (let n = 2; taken.has(name); n++) name = `${wanted} (${n})`;
    await this.call(ctx, `/${name}`, (signal) => dav.client.createDirectory(`/${name}`, { signal }));
    knownDirs.add(`/${name}`);
    return name;
  }

  /** MKCOL each missing level (a PUT into a missing folder is a 409). */
  private async ensureDir(ctx: TargetContext, dav: Dav, dir: string, knownDirs: Set<string>): Promise<void> {
    if (knownDirs.has(dir)) return;
    await this.ensureDir(ctx, dav, path.posix.dirname(dir), knownDirs);
    const existing = await this.statOrNull(ctx, dav, dir);
    if (existing && existing.type !== 'directory') throw conflict(`'${dir}' exists on the server as a file, not a folder.`);
    if (!existing) await this.call(ctx, dir, (signal) => dav.client.createDirectory(dir, { signal }));
    knownDirs.add(dir);
  }

  private async writeFile(ctx: TargetContext, dav: Dav, entry: Entry, destination: string, options: WriteOptions, outcome: WriteOutcome): Promise<void> {
    const existing = await this.statOrNull(ctx, dav, destination);
    if (existing?.type === 'directory') throw conflict(`'${entry.path}' exists on the server as a folder.`);
    if (existing && options.duplicateAction === 'ignore') {
      outcome.ignored.push(entry.path);
      return;
    }
    if (!existing) {
      await this.putThenMove(ctx, dav, destination, () => entry.open(), entry.size, false);
      outcome.created.push(entry.path);
      return;
    }
    // update: replace only when the bytes differ — by the server's stored MD5 if it has
    // one, else by downloading and hashing the file that is there.
    const incoming = await sizeAndMd5(entry, options.signal);
    try {
      const stored = hashesFromChecksums((existing.props as Record<string, unknown> | undefined)?.checksums).md5
        ?? (existing.size === incoming.size ? await this.md5Of(ctx, dav, destination) : null);
      if (stored === incoming.md5) {
        outcome.ignored.push(entry.path);
        return;
      }
      await this.putThenMove(ctx, dav, destination, incoming.open, incoming.size, true);
      outcome.updated.push(entry.path);
    } finally {
      await incoming.dispose();
    }
  }

  private async md5Of(ctx: TargetContext, dav: Dav, remotePath: string): Promise<string> {
    return (await hashStream(await this.download(ctx, dav, remotePath), ['md5'])).hashes.md5 as string;
  }

  /**
   * PUT to a hidden temp name beside the destination (retried, the bytes opened afresh: a
   * PUT to a name only this job uses is safe to repeat), then MOVE (Overwrite: T only for
   * updates). A MOVE whose answer was lost may still have happened: then the temp name is
   * gone and the destination holds the upload's size, which counts as done.
   */
  private async putThenMove(ctx: TargetContext, dav: Dav, destination: string, open: () => Promise<Readable>, size: number | null, overwrite: boolean): Promise<void> {
    const temp = path.posix.join(path.posix.dirname(destination), `.${path.posix.basename(destination)}.ferry-${randomBytes(6).toString('hex')}.part`);
    try {
      const response = await this.bytesRequest(ctx, dav, temp, {
        method: 'PUT',
        body: async () => {
          throwIfAborted(ctx.signal);
          return open();
        },
        // no If-None-Match: the temp name is this upload's alone, and a retry must replace a first try that landed
        headers: { 'content-type': 'application/octet-stream', ...(size !== null ? { 'content-length': String(size) } : {}) },
      });
      await response.body?.cancel().catch(() => undefined);
      try {
        await this.call(ctx, destination, (signal) => dav.client.moveFile(temp, destination, { overwrite, signal }));
      } catch (error) {
        if (!(error instanceof FerryError) || error.status < 500) throw error;
        const left = await this.statOrNull(ctx, dav, temp);
        const landed = await this.statOrNull(ctx, dav, destination);
        if (left || !landed || landed.type !== 'file' || (size !== null && landed.size !== size)) throw error;
      }
    } catch (error) {
      await this.call(ctx, temp, (signal) => dav.client.deleteFile(temp, { signal })).catch(() => undefined);
      if (error instanceof FerryError && (error.status === 409 || error.status === 412) && !overwrite) {
        throw conflict(`'${path.posix.basename(destination)}' appeared on the server during the upload; it was left as it is.`);
      }
      throw error;
    }
  }

  /** One request (a webdav-client call), cut off after the timeout; errors as FerryErrors. */
  private async call<T>(ctx: TargetContext, what: string, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const timeoutMs = this.options.timeoutMs ?? 60_000;
    const timeout = AbortSignal.timeout(timeoutMs);
    try {
      return await fn(AbortSignal.any([ctx.signal, timeout]));
    } catch (error) {
      if (ctx.signal.aborted) throw new CancelledError();
      if (timeout.aborted) throw new FerryError(504, 'upstream_unavailable', 'The WebDAV server did not answer in time; try again later.');
      throw toFerryError(error, what);
    }
  }

  /**
   * Reads only (PROPFIND): retried on 429/5xx/network errors, honouring Retry-After. Not
   * after a timeout (504): waiting that long again helps no one.
   */
  private async retrying<T>(ctx: TargetContext, what: string, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const retries = this.options.retries ?? 3;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.call(ctx, what, fn);
      } catch (error) {
        const retriable = error instanceof FerryError && [429, 500, 502, 503].includes(error.status);
        if (!retriable || attempt >= retries) throw error;
        const wait = (error as FerryError).retryAfter !== undefined ? (error as FerryError).retryAfter! * 1000 : 300 * 2 ** attempt;
        if (wait > (this.options.maxRetryAfterMs ?? 60_000)) throw error;
        await new Promise((resolve) => setTimeout(resolve, wait));
        throwIfAborted(ctx.signal);
      }
    }
  }
}

/** The webdav client's errors (`status`, `response`) and network failures → FerryError. */
export function toFerryError(error: unknown, remotePath: string): FerryError {
  if (error instanceof FerryError) return error;
  const status = (error as { status?: number }).status ?? (error as { response?: { status?: number } }).response?.status;
  const headers = (error as { response?: { headers?: { get?(name: string): string | null } } }).response?.headers;
  const retryAfterHeader = typeof headers?.get === 'function' ? headers.get('retry-after') : null;
  const retryAfter = retryAfterHeader && Number.isFinite(Number(retryAfterHeader)) ? Number(retryAfterHeader) : undefined;
  const name = remotePath === '/' ? 'the top folder' : `'${remotePath}'`;
  switch (status) {
    case undefined: {
      const code = (error as { cause?: { code?: string }; code?: string }).cause?.code ?? (error as { code?: string }).code;
      return new FerryError(502, 'upstream_unavailable', `The WebDAV server could not be reached${code ? ` (${code})` : ''}.`);
    }
    case 401:
      return unauthorized('The WebDAV token is invalid or expired: the server refused the username or app password.');
    case 403:
      return forbidden(`The WebDAV account may not do this to ${name}.`);
    case 404:
      return notFound(`The WebDAV server has no ${name}, or the account cannot see it.`);
    case 405:
    case 409:
    case 412:
    case 423:
      return new FerryError(409, 'conflict', `The WebDAV server refused ${name} (HTTP ${status}${status === 423 ? ': locked' : ''}).`);
    case 413:
    case 507:
      return tooLarge(`The WebDAV server has no room for ${name} (HTTP ${status}).`);
    case 429:
      return new FerryError(429, 'rate_limited', `The WebDAV server is limiting the request rate; try again${retryAfter ? ` in ${retryAfter} s` : ' later'}.`, retryAfter);
    default:
      if (status >= 500) return new FerryError(status === 503 ? 503 : 502, status === 503 ? 'upstream_unavailable' : 'upstream_error', `The WebDAV server failed with HTTP ${status}.`, retryAfter);
      return new FerryError(502, 'upstream_error', `The WebDAV server answered HTTP ${status} for ${name}.`);
  }
}

/** A path below the account URL, each segment percent-encoded (relative, so the URL's own path stays). */
function encodeDavPath(remotePath: string): string {
  return remotePath.split('/').filter(Boolean).map(encodeURIComponent).join('/');
}

function nodeOf(stat: FileStat): ResourceNode {
  const parent = path.posix.dirname(stat.filename);
  return {
    kind: stat.type === 'directory' ? 'container' : 'item',
    kind_name: stat.type === 'directory' ? 'folder' : 'file',
    id: webdavId(stat.filename),
    container: parent === '/' ? null : webdavId(parent),
    title: stat.basename,
  };
}

function fileEntry(entryPath: string, stat: FileStat, open: Entry['open']): Entry {
  const modified = stat.lastmod ? new Date(stat.lastmod) : null;
  return {
    path: entryPath,
    kind: 'file',
    size: stat.size,
    mtime: modified && !Number.isNaN(modified.getTime()) ? modified : null,
    hashes: hashesFromChecksums((stat.props as Record<string, unknown> | undefined)?.checksums),
    open,
  };
}

function folderEntry(entryPath: string, stat: FileStat): Entry {
  const modified = stat.lastmod ? new Date(stat.lastmod) : null;
  return { path: entryPath, kind: 'folder', size: null, mtime: modified && !Number.isNaN(modified.getTime()) ? modified : null, hashes: {}, open: () => Promise.reject(new Error(`${entryPath} is a folder`)) };
}
