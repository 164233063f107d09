import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { Readable } from 'node:stream';
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
import { sizeAndMd5 } from '../../remote/spool.js';
import { parseWebdavToken } from './credentials.js';

export interface WebdavTargetOptions {
  /** retries of reads on 429/502/503/504 and network errors (default 3) */
  retries?: number;
  /** longest Retry-After honoured, ms (default 60 s) */
  maxRetryAfterMs?: number;
  /** per request, ms (default 60 s; uploads and downloads are not cut off) */
  timeoutMs?: number;
}

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

  constructor(private readonly options: WebdavTargetOptions = {}) {}

  private connect(ctx: TargetContext): WebDAVClient {
    const credentials = parseWebdavToken(ctx.token);
    return createClient(credentials.url, { username: credentials.username, password: credentials.password });
  }

  async *list(ctx: TargetContext, scope?: ListScope): AsyncIterable<ResourceNode> {
    const client = this.connect(ctx);
    const start = scope?.container ? parseWebdavId(scope.container) : '/';
    yield* this.walk(ctx, client, start, scope === undefined);
  }

  private async *walk(ctx: TargetContext, client: WebDAVClient, dir: string, recursive: boolean): AsyncIterable<ResourceNode> {
    for (const stat of await this.children(ctx, client, dir)) {
      yield nodeOf(stat);
      if (recursive && stat.type === 'directory') yield* this.walk(ctx, client, stat.filename, true);
    }
  }

  /** One PROPFIND, Depth 1 (servers often refuse `infinity`), sorted by name. */
  private async children(ctx: TargetContext, client: WebDAVClient, dir: string): Promise<FileStat[]> {
    const result = await this.retrying(ctx, dir, () =>
      client.getDirectoryContents(dir, { details: true, data: PROPFIND_BODY, signal: ctx.signal }),
    );
    return result.data.filter((stat) => stat.filename !== dir.replace(/\/$/, '')).sort((a, b) => a.basename.localeCompare(b.basename));
  }

  private stat(ctx: TargetContext, client: WebDAVClient, remotePath: string): Promise<FileStat> {
    return this.retrying(ctx, remotePath, async () => {
      const result = (await client.stat(remotePath, { details: true, data: PROPFIND_BODY, signal: ctx.signal })) as ResponseDataDetailed<FileStat>;
      return result.data;
    });
  }

  private async statOrNull(ctx: TargetContext, client: WebDAVClient, remotePath: string): Promise<FileStat | null> {
    try {
      return await this.stat(ctx, client, remotePath);
    } catch (error) {
      if (error instanceof FerryError && error.status === 404) return null;
      throw error;
    }
  }

  async detail(ctx: TargetContext, id: string): Promise<ResourceInfo> {
    const client = this.connect(ctx);
    const stat = await this.stat(ctx, client, parseWebdavId(id));
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
    const client = this.connect(ctx);
    const stat = await this.stat(ctx, client, parseWebdavId(id));
    const root = nodeOf(stat);
    const title = stat.basename;
    const open = (remotePath: string) => async (): Promise<Readable> => client.createReadStream(remotePath, { signal: ctx.signal }) as Readable;
    if (stat.type === 'file') {
      const entry = fileEntry(title, stat, open(stat.filename));
      return { title, root, entries: (async function* () { yield entry; })() };
    }
    const children = (dir: string) => this.children(ctx, client, dir);
    async function* entries(dir: string, prefix: string): AsyncIterable<Entry> {
      for (const child of await children(dir)) {
        const entryPath = `${prefix}/${child.basename}`;
        if (child.type === 'directory') {
          yield folderEntry(entryPath, child);
          yield* entries(child.filename, entryPath);
        } else {
          yield fileEntry(entryPath, child, open(child.filename));
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
    const client = this.connect(ctx);
    const outcome: WriteOutcome = { created: [], updated: [], ignored: [], fileErrors: [] };
    const knownDirs = new Set<string>(['/']);
    let base: string;
    let top: { original: string; actual: string } | null = null;
    if (containerId === null) {
      base = '/';
    } else {
      base = parseWebdavId(containerId);
      const stat = await this.stat(ctx, client, base);
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
        if (!top) top = { original: segments[0] as string, actual: await this.newTopFolder(ctx, client, segments[0] as string, knownDirs) };
        if (segments[0] !== top.original) throw badRequest(`A new top-level folder is made from one top folder; '${entry.path}' is outside '${top.original}'.`);
        segments[0] = top.actual;
      }
      const destination = path.posix.join(base, ...segments);
      try {
        if (entry.kind === 'folder') {
          await this.ensureDir(ctx, client, destination, knownDirs);
          continue;
        }
        await this.ensureDir(ctx, client, path.posix.dirname(destination), knownDirs);
        await this.writeFile(ctx, client, entry, destination, options, outcome);
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

  private async newTopFolder(ctx: TargetContext, client: WebDAVClient, wanted: string, knownDirs: Set<string>): Promise<string> {
    const taken = new Set((await this.children(ctx, client, '/')).map((stat) => stat.basename));
    let name = wanted;
    for (let n = 2; taken.has(name); n++) name = `${wanted} (${n})`;
    await this.call(ctx, `/${name}`, () => client.createDirectory(`/${name}`, { signal: ctx.signal }));
    knownDirs.add(`/${name}`);
    return name;
  }

  /** MKCOL each missing level (a PUT into a missing folder is a 409). */
  private async ensureDir(ctx: TargetContext, client: WebDAVClient, dir: string, knownDirs: Set<string>): Promise<void> {
    if (knownDirs.has(dir)) return;
    await this.ensureDir(ctx, client, path.posix.dirname(dir), knownDirs);
    const existing = await this.statOrNull(ctx, client, dir);
    if (existing && existing.type !== 'directory') throw conflict(`'${dir}' exists on the server as a file, not a folder.`);
    if (!existing) await this.call(ctx, dir, () => client.createDirectory(dir, { signal: ctx.signal }));
    knownDirs.add(dir);
  }

  private async writeFile(ctx: TargetContext, client: WebDAVClient, entry: Entry, destination: string, options: WriteOptions, outcome: WriteOutcome): Promise<void> {
    const existing = await this.statOrNull(ctx, client, destination);
    if (existing?.type === 'directory') throw conflict(`'${entry.path}' exists on the server as a folder.`);
    if (existing && options.duplicateAction === 'ignore') {
      outcome.ignored.push(entry.path);
      return;
    }
    if (!existing) {
      await this.putThenMove(ctx, client, destination, await entry.open(), entry.size, false);
      outcome.created.push(entry.path);
      return;
    }
    // update: replace only when the bytes differ — by the server's stored MD5 if it has
    // one, else by downloading and hashing the file that is there.
    const incoming = await sizeAndMd5(entry, options.signal);
    try {
      const stored = hashesFromChecksums((existing.props as Record<string, unknown> | undefined)?.checksums).md5
        ?? (existing.size === incoming.size ? await this.md5Of(ctx, client, destination) : null);
      if (stored === incoming.md5) {
        outcome.ignored.push(entry.path);
        return;
      }
      await this.putThenMove(ctx, client, destination, await incoming.open(), incoming.size, true);
      outcome.updated.push(entry.path);
    } finally {
      await incoming.dispose();
    }
  }

  private async md5Of(ctx: TargetContext, client: WebDAVClient, remotePath: string): Promise<string> {
    const stream = client.createReadStream(remotePath, { signal: ctx.signal }) as Readable;
    try {
      return (await hashStream(stream, ['md5'])).hashes.md5 as string;
    } catch (error) {
      throw toFerryError(error, remotePath);
    }
  }

  /** PUT to a hidden temp name beside the destination, then MOVE (Overwrite: T only for updates). */
  private async putThenMove(ctx: TargetContext, client: WebDAVClient, destination: string, body: Readable, size: number | null, overwrite: boolean): Promise<void> {
    const temp = path.posix.join(path.posix.dirname(destination), `.${path.posix.basename(destination)}.ferry-${randomBytes(6).toString('hex')}.part`);
    try {
      await this.call(ctx, destination, () =>
        client.putFileContents(temp, body, { overwrite: false, contentLength: size ?? false, signal: ctx.signal }),
      );
      await this.call(ctx, destination, () => client.moveFile(temp, destination, { overwrite, signal: ctx.signal }));
    } catch (error) {
      await client.deleteFile(temp).catch(() => undefined);
      if (error instanceof FerryError && error.status === 409 && !overwrite) {
        throw conflict(`'${path.posix.basename(destination)}' appeared on the server during the upload; it was left as it is.`);
      }
      throw error;
    } finally {
      body.destroy();
    }
  }

  /** One request, errors as FerryErrors. */
  private async call<T>(ctx: TargetContext, what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      if (ctx.signal.aborted) throw new CancelledError();
      throw toFerryError(error, what);
    }
  }

  /** Reads only: retried on 429/5xx/network errors, honouring Retry-After. */
  private async retrying<T>(ctx: TargetContext, what: string, fn: () => Promise<T>): Promise<T> {
    const retries = this.options.retries ?? 3;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.call(ctx, what, fn);
      } catch (error) {
        const retriable = error instanceof FerryError && [429, 502, 503, 504].includes(error.status);
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
