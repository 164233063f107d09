import path from 'node:path';
import { Readable } from 'node:stream';
import { createClient, type FileStat, type WebDAVClient } from 'webdav';
import { CancelledError, FerryError, badRequest, conflict, notFound, throwIfAborted } from '../../errors.js';
import { hashStream } from '../../hashing.js';
import { formatDate } from '../../time.js';
import {
  fileOperations,
  fullActions,
  type DeleteOutcome,
  type MoveOutcome,
  type MoveTo,
  type Entry,
  type ListScope,
  type ReadResult,
  type ResourceInfo,
  type ResourceNode,
  type Target,
  type TargetContext,
  type TargetInfo,
  type WriteOptions,
  type StoredRecord,
  type WriteOutcome,
  singleEntry,
} from '../../target.js';
import { isPerFileFailure } from '../../remote/file-failure.js';
import { RemoteClient } from '../../remote/http.js';
import { bodyStream } from '../../remote/node-answer.js';
import { derivedSignal } from '../../remote/retry-notice.js';
import { sizeAndMd5 } from '../../remote/spool.js';
import { verifyAdvertised } from '../../remote/advertised-fixity.js';
import { parseWebdavToken, type WebdavCredentials } from './credentials.js';
import { UNAUTHORIZED, reasonOf, shownName, toFerryError } from './dav-errors.js';
import { basePathOf, listingOf, statOf, statusesOf } from './multistatus.js';
import { isAbandoned, isFerryTempName, MAX_NAME_BYTES, tempNameFor } from './temp-names.js';
import type { NamingRules } from '../../plan/naming-rules.js';
import { judgedEntries } from '../../plan/write-plan.js';
import { discardBody } from '../../remote/answer-body.js';
import { OrderedPipeline, pipelineLimits, type PipelineLimits } from '../../jobs/ordered-pipeline.js';
import { removedOnFailure, type NewRecord } from '../../remote/new-record.js';
import { FinishedFolders } from '../../remote/finished-folders.js';
import { openWhole } from '../../jobs/whole-entry.js';
import { fastPathOn } from '../../fast-paths.js';
import { MOD_DAV_FS_NAMESPACE, modDavFsTraits, ServerRecognition, type ServerTraits } from './server-traits.js';

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
  /**
   * requests per second (default: none; a write or read bounds its requests in flight
   * instead, WEBDAV_IN_FLIGHT)
   */
  ratePerSecond?: number | null;
}

/** A connection to one account: the `webdav` client for PROPFIND/MKCOL/MOVE, RemoteClient for bytes. */
interface Dav {
  client: WebDAVClient;
  http: RemoteClient;
  credentials: WebdavCredentials;
  /** the server URL's path, decoded ('/remote.php/dav/files/ana'; '/' for none), which the hrefs of its listings begin with */
  basePath: string;
}

const DAV_MESSAGES = { unauthorized: UNAUTHORIZED };
/**
 * What this target keeps in flight in one write: files (each a PUT and a MOVE) and the sum of
 * their sizes. A server is the account's own, as with rclone (4 transfers, no rate) or the
 * Nextcloud desktop client (6 parallel jobs): its load is bounded by what is in flight, not
 * by a rate per second. Measured in docs/performance.md (`parallel-writes`).
 */
export const WEBDAV_IN_FLIGHT: PipelineLimits = { files: 8, bytes: 8 * 1024 * 1024 };

/** statuses of a GET/PUT the target words itself (toFerryError); the rest are RemoteClient's */
const WORDED_STATUSES = [400, 401, 403, 404, 405, 409, 412, 413, 423, 507];
/** every failure status, for a request worded wholly by the target (a MOVE, as the webdav client did) */
const EVERY_FAILURE = Array.from({ length: 200 }, (_, i) => 400 + i);

/**
 * What Ferry asks for in each PROPFIND: the standard properties, plus the ownCloud/Nextcloud
 * ones that carry a stable file id, stored checksums and the creation time, and mod_dav_fs's
 * `executable`, which shows that mod_dav_fs stores the files (server-traits.ts). Servers that
 * do not know a property just report it missing.
 */
const PROPFIND_BODY = `<?xml version="1.0" encoding="utf-8"?>
<d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns" xmlns:nc="http://nextcloud.org/ns" xmlns:a="${MOD_DAV_FS_NAMESPACE}">
  <d:prop>
    <d:getlastmodified/><d:getcontentlength/><d:getcontenttype/><d:getetag/><d:resourcetype/>
    <oc:fileid/><oc:checksums/><nc:creation_time/><a:executable/>
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
 * Names a WebDAV server refuses (docs/targets/webdav.md, "Limits"): Nextcloud's defaults
 * (`.htaccess`; `.part` always, `.filepart`; 250 bytes), ownCloud 10's `\.(part|filepart)$`,
 * Apache's stock denial of `.ht*`. Refused before any request, not answered mid-write.
 */
const WEBDAV_NAMING_RULES: NamingRules = {
  reservedPrefixes: ['.ht'],
  forbiddenExtensions: ['.part', '.filepart'],
  maxNameBytes: MAX_NAME_BYTES,
  evidence: 'docs/targets/webdav.md, Limits (Nextcloud FilenameValidator, ownCloud 10, Apache .ht*)',
};

/**
 * Any WebDAV server (Nextcloud, ownCloud, Apache mod_dav, rclone, ...): PROPFIND, MKCOL,
 * DELETE and PROPPATCH through the `webdav` client, a file's GET, PUT and MOVE through
 * RemoteClient (bytesRequest, move). Folders are containers, files items; the top level is
 * the children of the account's URL. Uploads go to a temporary name in the destination folder (temp-names.ts)
 * and are MOVEd into place, so a reader never sees half a file; a temp file is never
 * listed, and never outlives a failed or cancelled upload that can still reach the server. On a
 * server that does the same itself for every PUT (server-traits.ts), a file is one PUT onto its name.
 * Every request and what each server does with it: docs/targets/webdav.md.
 *
 * `supported_hash_algorithms` lists md5 and sha1 because servers that store checksums
 * (Nextcloud/ownCloud `oc:checksums`) report them; on other servers `hashes` is `{}`.
 */
export class WebdavTarget implements Target {
  readonly namingRules = WEBDAV_NAMING_RULES;
  readonly info: TargetInfo = {
    name: 'webdav',
    readable_name: 'WebDAV',
    supported_actions: fullActions(true),
    supported_hash_algorithms: ['md5', 'sha1'],
    credential: 'remote',
    supported_operations: fileOperations(),
    concurrency: WEBDAV_IN_FLIGHT,
  };

  private readonly httpClients = new Map<string, RemoteClient>();
  /**
   * By server URL, the folders where a write saw that mod_dav_fs stores the files (step 2 of
   * server-traits.ts), each the destination of that write: a later write into one of them or
   * below starts knowing it, as a write's own evidence holds for all it writes. The newest 64.
   */
  private readonly modDavFsFolders = new Map<string, string[]>();

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
        ratePerSecond: this.options.ratePerSecond ?? null,
        timeoutMs: this.options.timeoutMs,
        retries: this.options.retries ?? 3,
        maxRetryAfterMs: this.options.maxRetryAfterMs ?? 60_000,
        messages: DAV_MESSAGES,
      });
      this.httpClients.set(credentials.url, http);
    }
    return { client, http, credentials, basePath: basePathOf(credentials.url) };
  }

  /** A request through RemoteClient (timeouts, retries, clear mid-body errors): a GET or PUT of file bytes, a MOVE, an OPTIONS. */
  private async bytesRequest(ctx: TargetContext, dav: Dav, remotePath: string, options: Parameters<RemoteClient['request']>[1], shownAs = remotePath, worded = WORDED_STATUSES): Promise<Response> {
    const url = new URL(encodeDavPath(remotePath), dav.http.baseUrl);
    const basic = Buffer.from(`${dav.credentials.username}:${dav.credentials.password}`).toString('base64');
    const response = await dav.http.request(url.toString(), {
      ...options,
      signal: ctx.signal,
      headers: { ...options?.headers, authorization: `Basic ${basic}` },
      allow: worded,
    });
    if (response.ok) return response;
    throw toFerryError({ status: response.status, response }, shownAs, await reasonOf(response));
  }

  /**
   * MOVE `from` to `to` (RFC 4918 §9.9) through RemoteClient, as the PUT before it: the
   * `Destination` is `to`'s absolute URI, built as every request URL is (encodeDavPath), and
   * `Overwrite` is always sent (§10.6: a missing header means T). Sent once, never retried: a
   * MOVE whose answer was lost may have landed, which its callers check. Every failure is worded
   * here (toFerryError), as the webdav client's were.
   */
  private async move(ctx: TargetContext, dav: Dav, from: string, to: string, overwrite: boolean, shownAs: string): Promise<void> {
    const destination = new URL(encodeDavPath(to), dav.http.baseUrl).toString();
    let response: Response;
    try {
      // an empty body, as the webdav client sent (Content-Length: 0), given as a stream: the MOVE
      // goes out as the PUTs do (remote/streamed-request.ts), not through ky and fetch, whose
      // objects, 8 MOVEs in flight, set a write's peak memory (docs/performance.md)
      const empty = { method: 'MOVE', body: () => Readable.from([]), headers: { destination, overwrite: overwrite ? 'T' : 'F', 'content-length': '0' }, retry: false };
      response = await this.bytesRequest(ctx, dav, from, empty, shownAs, EVERY_FAILURE);
    } catch (error) {
      if (ctx.signal.aborted) throw new CancelledError();
      throw error;
    }
    await discardBody(response);
  }

  private async download(ctx: TargetContext, dav: Dav, remotePath: string): Promise<Readable> {
    const response = await this.bytesRequest(ctx, dav, remotePath, { method: 'GET' });
    return bodyStream(response);
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

  /**
   * One PROPFIND, Depth 1 (servers often refuse `infinity`), sorted by name, without
   * Ferry's own temporary upload names: a half-made upload is never a resource.
   */
  private async children(ctx: TargetContext, dav: Dav, dir: string): Promise<FileStat[]> {
    return (await this.childrenWithTemps(ctx, dav, dir)).filter((stat) => !isFerryTempName(stat.basename));
  }

  private async childrenWithTemps(ctx: TargetContext, dav: Dav, dir: string): Promise<FileStat[]> {
    return (await this.listing(ctx, dav, dir)).children;
  }

  /** One PROPFIND Depth 1 of `dir`: the folder's own entry (null if the server gave none) and its children, sorted by name. */
  private async listing(ctx: TargetContext, dav: Dav, dir: string): Promise<{ self: FileStat | null; children: FileStat[] }> {
    const own = dir === '/' ? '/' : dir.replace(/\/$/, '');
    // a folder's URL with its trailing slash, as the webdav client sent it
    const listed = await this.retrying(ctx, dir, async (signal) => listingOf(await this.propfind(dav, own === '/' ? '/' : `${own}/`, '1', signal), dav.basePath, shownName(dir)));
    let self: FileStat | null = null;
    const children: FileStat[] = [];
    for (const stat of listed) {
      if (stat.filename === own || stat.basename === '') self ??= stat;
      else children.push(stat);
    }
    return { self, children: children.sort((a, b) => a.basename.localeCompare(b.basename)) };
  }

  private stat(ctx: TargetContext, dav: Dav, remotePath: string): Promise<FileStat> {
    return this.retrying(ctx, remotePath, async (signal) => statOf(await this.propfind(dav, remotePath, '0', signal), dav.basePath, shownName(remotePath)));
  }

  /** The body of one PROPFIND of PROPFIND_BODY's properties (its errors the webdav client's, as each `call` maps them). */
  private async propfind(dav: Dav, remotePath: string, depth: '0' | '1', signal: AbortSignal): Promise<string> {
    const response = await dav.client.customRequest(remotePath, {
      method: 'PROPFIND',
      headers: { accept: 'text/plain,application/xml', depth, 'content-type': 'application/xml; charset=utf-8' },
      data: PROPFIND_BODY,
      signal,
    } as Parameters<WebDAVClient['customRequest']>[1]);
    return response.text();
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
    if (stat.type === 'file') return { title, root, entries: singleEntry(fileEntry(title, stat, open(stat))) };
    return { title, root, entries: this.folderEntries(ctx, dav, stat, title, open) };
  }

  /** A folder's entries: itself, then what it holds, each folder before its contents (a method, not a closure per read: see singleEntry, target.ts). */
  private async *folderEntries(ctx: TargetContext, dav: Dav, folder: FileStat, entryPath: string, open: (stat: FileStat) => Entry['open']): AsyncGenerator<Entry> {
    yield folderEntry(entryPath, folder);
    for (const child of await this.children(ctx, dav, folder.filename)) {
      const childPath = `${entryPath}/${child.basename}`;
      if (child.type === 'directory') yield* this.folderEntries(ctx, dav, child, childPath, open);
      else yield fileEntry(childPath, child, open(child));
    }
  }

  async write(ctx: TargetContext, containerId: string | null, source: AsyncIterable<Entry>, options: WriteOptions): Promise<WriteOutcome> {
    const entries = await judgedEntries(this, containerId, source, options);
    // a new top folder that a failed or cancelled upload made is deleted again, kept for a paused or stopped job (remote/new-record.ts)
    if (containerId === null) return removedOnFailure((made) => this.writeInto(ctx, null, entries, options, made), options.signal);
    return this.writeInto(ctx, containerId, entries, options, () => {});
  }

  private async writeInto(ctx: TargetContext, containerId: string | null, entries: AsyncIterable<Entry>, options: WriteOptions, made: (record: NewRecord) => void): Promise<WriteOutcome> {
    const dav = this.connect(ctx);
    const outcome: WriteOutcome = { created: [], updated: [], ignored: [], fileErrors: [] };
    const session: WriteSession = { folders: new Map(), dirs: new Map([['/', Promise.resolve()]]), setMtime: 'untried', lostMtimes: new Set(), server: new ServerRecognition(), look: null };
    const lostMtimes: string[] = [];
    /** destination → the entry's path, for each file created or updated */
    const written = new Map<string, string>();
    const base = containerId === null ? '/' : parseWebdavId(containerId);
    let top: { actual: string } | null = null;
    // the destination's listing, which the write needs first (a new top folder's name, or what
    // the container holds), and what the server is (server-traits.ts), in the same round trip
    // (both settled before anything is thrown: a write never ends with a request of its own under way)
    const [opened, candidate] = await Promise.allSettled([containerId === null ? this.folder(ctx, dav, '/', session) : this.openContainer(ctx, dav, base, session), this.candidateTraits(ctx, dav, base)]);
    if (opened.status === 'rejected') throw opened.reason;
    if (candidate.status === 'rejected') throw candidate.reason;
    session.server.candidateIs(candidate.value);
    if (this.knownModDavFs(dav, base)) session.server.servedHere();

    // The top folder and names are settled here, in entry order; each entry is then a task on
    // the pipeline, several at a time. A file's task waits for its folder, made (or listed) once
    // by the first task that needs it (ensureDir, folder): a new folder's MKCOL does not hold up
    // the files of the folders before it, and no file request starts before its folder exists.
    const pipeline = new OrderedPipeline<FileResult>(pipelineLimits(this.info.concurrency), (result) => {
      if (result.error !== undefined) outcome.fileErrors.push({ path: result.path, error: result.error });
      else if ('folder' in result) return;
      else {
        outcome[result.list].push(result.path);
        options.onFileWritten?.(result.path);
        if (result.list !== 'ignored') written.set(result.destination, result.path);
      }
      if (result.entry && session.lostMtimes.has(result.entry)) lostMtimes.push(result.path);
    }, options.signal);
    // the server's record of written files, from folders listed while the write goes on (finished-folders.ts)
    const wantsRecords = options.wantsStoredRecords !== false;
    const finished = wantsRecords && fastPathOn('early-listings') ? new FinishedFolders<[destination: string, entryPath: string]>() : null;
    const recorded = new Map<string, StoredRecord>();
    const perFile = (entryPath: string, error: unknown): FileResult => {
      if (!isPerFileFailure(error, options.signal)) throw error;
      return { path: entryPath, error: error.message };
    };
    /** where `entry` goes: below `base`, a new top folder under the name it was made with */
    const destinationOf = (entry: Entry, actualTop: string): string => {
      const segments = entry.path.split('/');
      if (containerId === null) segments[0] = actualTop; // the plan holds one top folder
      return path.posix.join(base, ...segments);
    };
    // Work ahead for an entry still to come (OrderedPipeline.withPreparation): its folder made,
    // or listed where it was there before, while the files before it are under way, so its
    // first file does not hold a place in the pipeline waiting for an MKCOL or a PROPFIND.
    // Only once the destination is known (a new top folder is made at the first entry).
    const prepared = new Set<string>();
    const prepare = async (entry: Entry): Promise<void> => {
      if (containerId === null && !top) return;
      const destination = destinationOf(entry, top?.actual ?? '');
      const dir = entry.kind === 'folder' ? destination : path.posix.dirname(destination);
      const listed = entry.kind === 'folder' || session.folders.has(dir);
      const step = `${listed ? 'made' : 'listed'} ${dir}`;
      if ((session.dirs.has(dir) && listed) || prepared.has(step)) return;
      prepared.add(step);
      await pipeline.startAhead(dir.toLowerCase(), async () => {
        await this.ensureDir(ctx, dav, dir, session);
        if (!listed) await this.folder(ctx, dav, dir, session);
      });
    };
    try {
      for await (const entry of pipeline.withPreparation(entries, prepare)) {
        if (pipeline.stopped) break;
        throwIfAborted(options.signal);
        if (containerId === null) {
          if (!top) {
            top = { actual: await this.newTopFolder(ctx, dav, entry.path.split('/')[0]!, session) };
            options.onNewResource?.({ id: webdavId(`/${top.actual}`), title: top.actual });
            const folder = `/${top.actual}`;
            made({
              label: `the new folder '${top.actual}'`,
              howToRemove: `delete the folder '${top.actual}' at the top of the WebDAV account`,
              // DELETE of a collection removes what is in it (RFC 4918 §9.6.1); its own deadline: the job's signal may have fired
              remove: () => dav.client.deleteFile(folder, { signal: AbortSignal.timeout(30_000) }),
            });
          }
        }
        const destination = destinationOf(entry, top?.actual ?? '');
        if (entry.kind === 'folder') {
          await pipeline.start(destination.toLowerCase(), 0, async (): Promise<FileResult> => {
            try {
              await this.ensureDir(ctx, dav, destination, session);
              return { path: entry.path, folder: true };
            } catch (error) {
              return perFile(entry.path, error);
            }
          });
          continue;
        }
        const dir = path.posix.dirname(destination);
        const task = async (): Promise<FileResult> => {
          let list: WrittenAs | null = null;
          try {
            await this.ensureDir(ctx, dav, dir, session);
            const existing = (await this.folder(ctx, dav, dir, session)).get(path.posix.basename(destination));
            list = await this.writeFile(ctx, dav, entry, destination, existing, options, session);
            return { path: entry.path, entry, destination, list };
          } catch (error) {
            return { ...perFile(entry.path, error), entry };
          } finally {
            finished?.ended(dir, list !== null && list !== 'ignored' ? [destination, entry.path] : null);
          }
        };
        if (finished) {
          for (const { folder, files } of finished.takeFinished()) {
            // a listing that fails or never starts records nothing: its files are listed after the write
            await pipeline.startAhead(`listed ${folder}`, async () => {
              for (const [entryPath, record] of await this.recordsOf(ctx, dav, folder, files)) recorded.set(entryPath, record);
            });
          }
          finished.starting(dir);
        }
        // the same name twice (or two spellings a server may take for one) never at once
        if (!(await pipeline.startFile(entry, destination.toLowerCase(), task))) finished?.ended(dir, null);
      }
    } finally {
      // never return (or throw) while a request is under way
      await pipeline.drain();
    }
    await pipeline.finish();
    const writtenInto = containerId === null ? (top ? `/${top.actual}` : null) : base;
    if (session.server.recognised && writtenInto) this.rememberModDavFs(dav, writtenInto);
    if (wantsRecords) outcome.stored = await this.storedRecords(ctx, dav, written, recorded);
    if (containerId === null) {
      if (!top) throw badRequest('The upload holds nothing: a new top-level folder needs one top folder.');
      outcome.newResource = { id: webdavId(`/${top.actual}`), title: top.actual };
    }
    if (lostMtimes.length > 0) outcome.notes = [lostMtimesNote(lostMtimes)];
    return outcome;
  }

  /**
   * The server's record of each file written (its size, and its checksums where it keeps them:
   * oc:checksums on Nextcloud/ownCloud; webdav.md): `recorded` holds those of folders listed
   * while the write went on; the rest come from one PROPFIND Depth 1 per folder written to once
   * the write is done, as many at once as the write keeps files in flight (one after another
   * they would be a round trip each). The job verifies each file against it.
   */
  private async storedRecords(ctx: TargetContext, dav: Dav, written: ReadonlyMap<string, string>, recorded: ReadonlyMap<string, StoredRecord>): Promise<Map<string, StoredRecord>> {
    const byDir = new Map<string, [string, string][]>();
    for (const [destination, entryPath] of written) {
      if (recorded.has(entryPath)) continue;
      const dir = path.posix.dirname(destination);
      const files = byDir.get(dir);
      if (files) files.push([destination, entryPath]);
      else byDir.set(dir, [[destination, entryPath]]);
    }
    const records = new Map<string, StoredRecord>();
    const listings = new OrderedPipeline<void>(pipelineLimits(this.info.concurrency), () => undefined, ctx.signal);
    try {
      for (const [dir, files] of byDir) {
        if (listings.stopped) break;
        await listings.start(dir, 0, async () => {
          let listed: [string, StoredRecord][];
          try {
            listed = await this.recordsOf(ctx, dav, dir, files);
          } catch (error) {
            if (!isPerFileFailure(error, ctx.signal)) throw error;
            listed = files.map(([, entryPath]) => [entryPath, { unverifiable: `the folder could not be listed after the write (${error.message.replace(/\.$/, '')}).` }]);
          }
          for (const [entryPath, record] of listed) records.set(entryPath, record);
        });
      }
    } finally {
      // never return (or throw) while a request is under way
      await listings.drain();
    }
    await listings.finish();
    // in the order the files were written
    return new Map([...written.values()].flatMap((entryPath) => {
      const record = recorded.get(entryPath) ?? records.get(entryPath);
      return record ? [[entryPath, record] as const] : [];
    }));
  }

  /** What one listing of `dir`, taken after their writes, shows of `files` ([destination, entry path]). */
  private async recordsOf(ctx: TargetContext, dav: Dav, dir: string, files: readonly [string, string][]): Promise<[string, StoredRecord][]> {
    const listed = new Map((await this.childrenWithTemps(ctx, dav, dir)).map((stat) => [stat.basename, stat]));
    return files.map(([destination, entryPath]) => {
      const stat = listed.get(path.posix.basename(destination));
      return [
        entryPath,
        stat?.type === 'file'
          ? { hashes: hashesFromChecksums((stat.props as Record<string, unknown> | undefined)?.checksums), size: stat.size }
          : { unverifiable: 'the WebDAV server did not list the file in its folder after the write.' },
      ];
    });
  }

  /**
   * What a write knows of a folder on the server: its children by name, from one PROPFIND
   * Depth 1 the first time a file is written into it (or nothing, for a folder this write
   * made). Ferry's abandoned temp files found there are deleted on the way (see isAbandoned).
   */
  private folder(ctx: TargetContext, dav: Dav, dir: string, session: WriteSession): Promise<Map<string, FileStat>> {
    let children = session.folders.get(dir);
    if (!children) {
      children = this.listForWrite(ctx, dav, dir, session);
      session.folders.set(dir, children);
    }
    return children;
  }

  private async listForWrite(ctx: TargetContext, dav: Dav, dir: string, session: WriteSession): Promise<Map<string, FileStat>> {
    return this.childrenForWrite(dav, await this.childrenWithTemps(ctx, dav, dir), session);
  }

  /** A listing made for a write, by name, Ferry's abandoned temp files swept; a file of it may show that mod_dav_fs stores them (server-traits.ts). */
  private async childrenForWrite(dav: Dav, listed: FileStat[], session: WriteSession): Promise<Map<string, FileStat>> {
    session.server.sawFiles(listed);
    const children = new Map<string, FileStat>();
    for (const stat of listed) {
      if (!isFerryTempName(stat.basename)) children.set(stat.basename, stat);
      else if (isAbandoned(stat.basename, stat.lastmod ? new Date(stat.lastmod) : null)) await this.removeTemp(dav, stat.filename);
    }
    return children;
  }

  /**
   * The container of a write into one: a folder, listed once (PROPFIND Depth 1, whose first
   * entry is the folder itself), its children kept for the write as `folder` keeps them. Where
   * the listing does not show a folder (a file, a missing path, a refusal), a PROPFIND Depth 0
   * says which, in its own words.
   */
  private async openContainer(ctx: TargetContext, dav: Dav, base: string, session: WriteSession): Promise<void> {
    let failure: unknown = null;
    try {
      const listed = await this.listing(ctx, dav, base);
      if (listed.self?.type === 'directory') {
        const children = this.childrenForWrite(dav, listed.children, session);
        session.folders.set(base, children);
        session.dirs.set(base, children.then(() => undefined));
        await children;
        return;
      }
    } catch (error) {
      if (error instanceof CancelledError) throw error;
      failure = error;
    }
    const stat = await this.stat(ctx, dav, base);
    if (stat.type !== 'directory') throw badRequest(`'${stat.basename}' is a file; upload into a folder.`);
    throw failure ?? new FerryError(502, 'upstream_error', `The WebDAV server did not list '${base}' as a folder.`);
  }

  private async newTopFolder(ctx: TargetContext, dav: Dav, wanted: string, session: WriteSession): Promise<string> {
    const taken = await this.folder(ctx, dav, '/', session);
    let name = wanted;
    for (let n = 2; taken.has(name); n++) name = `${wanted} (${n})`;
    await this.call(ctx, `/${name}`, (signal) => dav.client.createDirectory(`/${name}`, { signal }));
    session.folders.set(`/${name}`, Promise.resolve(new Map()));
    session.dirs.set(`/${name}`, Promise.resolve());
    return name;
  }

  /**
   * Resolves once `dir` exists: each missing level is made by one MKCOL (a PUT into a missing
   * folder is a 409), known from the parent's listing. Once per folder a write: every file in
   * it waits for the same promise (a failure is each of their errors).
   */
  private ensureDir(ctx: TargetContext, dav: Dav, dir: string, session: WriteSession): Promise<void> {
    let ready = session.dirs.get(dir);
    if (!ready) {
      ready = this.makeDir(ctx, dav, dir, session);
      session.dirs.set(dir, ready);
    }
    return ready;
  }

  private async makeDir(ctx: TargetContext, dav: Dav, dir: string, session: WriteSession): Promise<void> {
    const parent = path.posix.dirname(dir);
    await this.ensureDir(ctx, dav, parent, session);
    const siblings = await this.folder(ctx, dav, parent, session);
    const existing = siblings.get(path.posix.basename(dir));
    if (existing && existing.type !== 'directory') throw conflict(`'${dir}' exists on the server as a file, not a folder.`);
    if (existing) return;
    await this.call(ctx, dir, (signal) => dav.client.createDirectory(dir, { signal }));
    siblings.set(path.posix.basename(dir), { filename: dir, basename: path.posix.basename(dir), type: 'directory', size: 0, lastmod: '', etag: null });
    session.folders.set(dir, Promise.resolve(new Map()));
  }

  /** One file, `existing` being what its folder's listing holds under its name; says which list it goes to. */
  private async writeFile(ctx: TargetContext, dav: Dav, entry: Entry, destination: string, existing: FileStat | undefined, options: WriteOptions, session: WriteSession): Promise<WrittenAs> {
    if (existing?.type === 'directory') throw conflict(`'${entry.path}' exists on the server as a folder.`);
    if (existing && options.duplicateAction === 'ignore') return 'ignored';
    if (!existing) {
      const upload: Upload = { destination, entry, open: () => openWhole(entry), size: entry.size, overwrite: false };
      if (session.server.traits.atomicPuts) await this.putInPlace(ctx, dav, upload, session);
      else await this.putThenMove(ctx, dav, upload, session, true);
      return 'created';
    }
    // update: replace only when the bytes differ — by the server's stored MD5 if it has
    // one, else by downloading and hashing the file that is there.
    const incoming = await sizeAndMd5(entry, options.signal);
    try {
      const stored = hashesFromChecksums((existing.props as Record<string, unknown> | undefined)?.checksums).md5
        ?? (existing.size === incoming.size ? await this.md5Of(ctx, dav, destination) : null);
      if (stored === incoming.md5) return 'ignored';
      const upload: Upload = { destination, entry, open: incoming.open, size: incoming.size, overwrite: true };
      const fileId = (existing.props as Record<string, unknown> | undefined)?.fileid;
      if (session.server.traits.atomicPuts || (fileId !== undefined && fileId !== null && fileId !== '')) await this.putInPlace(ctx, dav, upload, session);
      else await this.putThenMove(ctx, dav, upload, session);
      return 'updated';
    } finally {
      await incoming.dispose();
    }
  }

  private async md5Of(ctx: TargetContext, dav: Dav, remotePath: string): Promise<string> {
    return (await hashStream(await this.download(ctx, dav, remotePath), ['md5'])).hashes.md5 as string;
  }

  /**
   * PUT to a temporary name beside the destination (temp-names.ts; retried, the bytes
   * opened afresh: a PUT to a name only this upload uses is safe to repeat), then MOVE
   * (Overwrite: T only for updates). A MOVE whose answer was lost may still have happened:
   * then the temp name is gone and the destination holds the upload's size, which counts
   * as done. If anything fails or the job is cancelled, the temp file is deleted before the
   * error goes on; one that cannot be deleted is named in the error.
   *
   * The file's modification time goes with the PUT as `X-OC-MTime` (Nextcloud, ownCloud:
   * answered `X-OC-MTime: accepted`); where it is not accepted, one PROPPATCH of
   * `getlastmodified` is tried, and a refusal stops further tries in this write. A file
   * whose time could not be kept is reported in the outcome's notes. `mayLook`: this file's
   * temporary copy may be the one the recognition looks at (lookForModDavFs), before its MOVE.
   */
  private async putThenMove(ctx: TargetContext, dav: Dav, upload: Upload, session: WriteSession, mayLook = false): Promise<void> {
    const { destination, size, overwrite } = upload;
    const temp = path.posix.join(path.posix.dirname(destination), tempNameFor(path.posix.basename(destination)));
    const { wanted, mtime } = mtimeOf(upload.entry);
    let accepted = false;
    try {
      // no If-None-Match: the temp name is this upload's alone, and a retry must replace a first
      // try that landed; a refusal names the file the person asked for (the temp name ends with its name)
      accepted = await this.putBytes(ctx, dav, upload, temp, {}, destination);
      if (mayLook) await this.lookForModDavFs(ctx, dav, temp, session);
      try {
        await this.move(ctx, dav, temp, destination, overwrite, destination);
      } catch (error) {
        if (!(error instanceof FerryError) || error.status < 500) throw error;
        const left = await this.statOrNull(ctx, dav, temp);
        const landed = await this.statOrNull(ctx, dav, destination);
        if (left || !landed || landed.type !== 'file' || (size !== null && landed.size !== size)) throw error;
      }
    } catch (error) {
      const removed = await this.removeTemp(dav, temp);
      if (error instanceof FerryError && (error.status === 409 || error.status === 412) && !overwrite) {
        throw conflict(`'${path.posix.basename(destination)}' appeared on the server during the upload; it was left as it is.`);
      }
      if (!removed && error instanceof FerryError && !(error instanceof CancelledError)) {
        throw new FerryError(error.status, error.code, `${error.message} Ferry could not delete its temporary file '${temp}' on the server; delete it there.`, error.retryAfter);
      }
      throw error;
    }
    // the look's answer comes before the time's PROPPATCH, which mod_dav_fs, once seen, is known to refuse
    await session.look;
    await this.keepMtime(dav, upload, wanted, mtime, accepted, session);
  }

  /**
   * One PUT onto the file's own name, where the server writes a PUT to a temporary file of its
   * own and renames it over the name once the body is complete, so no reader sees half a file
   * and a cut or refused PUT leaves the name as it was:
   * - an update on a server that gives files a stable id (`oc:fileid`: Nextcloud, ownCloud,
   *   whose part file is apps/dav `File::put`'s): the file keeps its id and with it its shares
   *   and comments, where a MOVE over it deletes the old file first and the name gets a new id
   *   (Sabre's MOVE, as apps/dav `ChunkingPlugin::performMove` says);
   * - a new file or an update on a server recognised as writing PUTs atomically (server-traits.ts,
   *   fast path `direct-puts`): one request a file instead of a PUT and a MOVE.
   * A new file goes with `If-None-Match: *` (RFC 9110 §13.1.2), so one that appeared since its
   * folder was listed is left as it is (412), as the MOVE's `Overwrite: F` leaves it; a 412 for
   * a retried PUT whose first try landed is told apart by the bytes (`landedEarlier`).
   */
  private async putInPlace(ctx: TargetContext, dav: Dav, upload: Upload, session: WriteSession): Promise<void> {
    const { destination, overwrite } = upload;
    const { wanted, mtime } = mtimeOf(upload.entry);
    let accepted = false;
    try {
      // no If-Match on an update: a retried PUT whose first try landed would be refused, though
      // the file holds these bytes (the MOVE path's Overwrite: T checks no version either)
      accepted = await this.putBytes(ctx, dav, upload, destination, overwrite ? {} : { 'if-none-match': '*' });
    } catch (error) {
      if (overwrite || !isRefusedAs(error, 412)) throw error;
      if (!(await this.landedEarlier(ctx, dav, upload))) {
        throw conflict(`'${path.posix.basename(destination)}' appeared on the server during the upload; it was left as it is.`);
      }
    }
    await this.keepMtime(dav, upload, wanted, mtime, accepted, session);
  }

  /**
   * One PUT of the upload's bytes to `to` (retried by RemoteClient with the bytes opened
   * afresh), its modification time as X-OC-MTime; whether the server accepted that time.
   */
  private async putBytes(ctx: TargetContext, dav: Dav, upload: Upload, to: string, headers: Record<string, string>, shownAs = to): Promise<boolean> {
    const response = await this.bytesRequest(ctx, dav, to, {
      method: 'PUT',
      body: async () => {
        throwIfAborted(ctx.signal);
        return upload.open();
      },
      headers: {
        'content-type': 'application/octet-stream',
        ...(upload.size !== null ? { 'content-length': String(upload.size) } : {}),
        ...mtimeHeader(mtimeOf(upload.entry).mtime),
        ...headers,
      },
    }, shownAs);
    const accepted = response.headers.get('x-oc-mtime')?.trim().toLowerCase() === 'accepted';
    await discardBody(response);
    return accepted;
  }

  /**
   * After a new file's PUT was refused with 412 (the name is taken): whether what is there is
   * this upload's own bytes, from an earlier try of the same PUT whose answer was lost. Only
   * then does the file count as written; anything else at the name is someone else's file.
   */
  private async landedEarlier(ctx: TargetContext, dav: Dav, upload: Upload): Promise<boolean> {
    const there = await this.statOrNull(ctx, dav, upload.destination);
    if (there?.type !== 'file' || (upload.size !== null && there.size !== upload.size)) return false;
    const [theirs, ours] = await Promise.all([this.md5Of(ctx, dav, upload.destination), hashStream(await upload.open(), ['md5'])]);
    return theirs === ours.hashes.md5;
  }

  /** Whether an earlier write saw mod_dav_fs storing `folder` or a folder above it (modDavFsFolders). */
  private knownModDavFs(dav: Dav, folder: string): boolean {
    return this.modDavFsFolders.get(dav.credentials.url)?.some((known) => folder === known || folder.startsWith(`${known}/`)) ?? false;
  }

  private rememberModDavFs(dav: Dav, folder: string): void {
    const folders = (this.modDavFsFolders.get(dav.credentials.url) ?? []).filter((known) => known !== folder);
    this.modDavFsFolders.set(dav.credentials.url, [...folders, folder].slice(-64));
  }

  /**
   * What this server would be known to do once a file shows that mod_dav_fs stores it
   * (server-traits.ts, step 1), from one OPTIONS of `dir` a write; null for any other server.
   * Any failure answers null: the write then takes the requests that are safe anywhere.
   */
  private async candidateTraits(ctx: TargetContext, dav: Dav, dir: string): Promise<ServerTraits | null> {
    if (!fastPathOn('direct-puts')) return null;
    try {
      const response = await this.bytesRequest(ctx, dav, dir, { method: 'OPTIONS', retry: false }, dir, EVERY_FAILURE);
      await discardBody(response);
      return modDavFsTraits({ server: response.headers.get('server'), dav: response.headers.get('dav') });
    } catch (error) {
      if (ctx.signal.aborted) throw new CancelledError();
      return null;
    }
  }

  /**
   * Step 2 where no listing of the write showed a file (server-traits.ts): one PROPFIND Depth 0,
   * once a write, of the temporary copy of the first file whose PUT was answered, for
   * mod_dav_fs's `executable` (the copy is a file of the destination folder, stored as the file
   * will be). That file's MOVE waits for the answer (it would take the copy away); the other
   * files keep going meanwhile, by temp name and MOVE (right on every server), and wait for it
   * only before their time's PROPPATCH, which mod_dav_fs refuses; files started after it go as
   * it says. A failure of it proves nothing.
   */
  private async lookForModDavFs(ctx: TargetContext, dav: Dav, temp: string, session: WriteSession): Promise<void> {
    if (!session.server.open || session.look) return;
    session.look = this.statOrNull(ctx, dav, temp).then(
      (stat) => session.server.sawFiles(stat ? [stat] : []),
      () => undefined,
    );
    await session.look;
  }

  /** Where the PUT's X-OC-MTime was not accepted: a PROPPATCH, else the file is noted. */
  private async keepMtime(dav: Dav, upload: Upload, wanted: Date | null, mtime: Date | null, accepted: boolean, session: WriteSession): Promise<void> {
    if (!wanted || accepted) return;
    if (mtime && (await this.proppatchMtime(dav, upload.destination, mtime, session))) return;
    session.lostMtimes.add(upload.entry);
  }

  /**
   * Deletes a temp file, whatever became of the job: its own time limit, never the job's
   * signal (a cancelled job's signal is already aborted, and its temp file must still go).
   * A server may still be writing a cut-off PUT in place when the DELETE arrives: rclone
   * answers 423 Locked until its handler lets go, so a 423 is tried again (for ~5 s), and
   * the name is checked to be gone. True once it is.
   */
  private async removeTemp(dav: Dav, temp: string): Promise<boolean> {
    // 404: not there; 400: a name the server refuses (Nextcloud's InvalidPath), so none can be there
    const absent = (error: unknown) => [400, 404].includes((error as { status?: number }).status ?? 0);
    for (let round = 0; round < 10; round++) {
      if (round > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(1000, 100 * 2 ** round)));
      const signal = AbortSignal.timeout(15_000);
      try {
        await dav.client.deleteFile(temp, { signal });
      } catch (error) {
        if ((error as { status?: number }).status === 423) continue;
        if (!absent(error)) return false;
      }
      const still = await dav.client.exists(temp, { signal }).catch((error: unknown) => !absent(error));
      if (!still) return true;
    }
    return false;
  }

  /**
   * PROPPATCH `getlastmodified`, once per write until a server refuses it. RFC 4918 §15.7
   * makes it a protected property; Apache mod_dav, rclone and SabreDAV refuse it (the 207's
   * propstat is 403 or 409), so this only helps a server that allows it.
   */
  private async proppatchMtime(dav: Dav, destination: string, mtime: Date, session: WriteSession): Promise<boolean> {
    // a server known to refuse it is not asked (mod_dav_fs: server-traits.ts)
    if (session.server.traits.refusesLastModified) return false;
    // files written alongside each other wait for the first try's answer: still one refusal per write
    if (session.setMtime instanceof Promise && !(await session.setMtime)) return false;
    if (session.setMtime === 'refused') return false;
    const first = session.setMtime === 'untried';
    const attempt = this.proppatchOnce(dav, destination, mtime);
    if (first) session.setMtime = attempt;
    const set = await attempt;
    if (first || !set) session.setMtime = set ? 'works' : 'refused';
    return set;
  }

  private async proppatchOnce(dav: Dav, destination: string, mtime: Date): Promise<boolean> {
    const body = `<?xml version="1.0" encoding="utf-8"?><d:propertyupdate xmlns:d="DAV:"><d:set><d:prop><d:getlastmodified>${mtime.toUTCString()}</d:getlastmodified></d:prop></d:set></d:propertyupdate>`;
    try {
      const response = await dav.client.customRequest(destination, { method: 'PROPPATCH', headers: { 'content-type': 'application/xml; charset=utf-8' }, data: body, signal: AbortSignal.timeout(this.options.timeoutMs ?? 60_000) } as Parameters<WebDAVClient['customRequest']>[1]);
      if (response.status !== 207) return false;
      const statuses = statusesOf(await response.text(), shownName(destination));
      return statuses.length > 0 && statuses.every((s) => s !== null && s >= 200 && s < 300);
    } catch {
      // a refusal of the method itself (405, 403, 501) is the same answer: not settable here
      return false;
    }
  }

  /**
   * DELETE (RFC 4918 §9.6: on a collection, the collection and everything below it, as if
   * Depth: infinity). The server deletes for good; some (Nextcloud) keep their own trash bin.
   */
  async deleteResource(ctx: TargetContext, id: string): Promise<DeleteOutcome> {
    const dav = this.connect(ctx);
    const stat = await this.stat(ctx, dav, parseWebdavId(id));
    await this.call(ctx, stat.filename, (signal) => dav.client.deleteFile(stat.filename, { signal }));
    return { node: nodeOf(stat), into: { kind: 'deleted' } };
  }

  /**
   * MOVE with `Overwrite: F` (RFC 4918 §9.9, §10.6): a taken destination is answered 412
   * and nothing moves. With `overwrite`, `Overwrite: T`: the server deletes what is there
   * first (§9.9.3), so the answer says it was deleted.
   */
  async moveResource(ctx: TargetContext, id: string, to: MoveTo): Promise<MoveOutcome> {
    const dav = this.connect(ctx);
    const source = await this.stat(ctx, dav, parseWebdavId(id));
    const before = nodeOf(source);
    let parent = path.posix.dirname(source.filename);
    if (to.container === null) parent = '/';
    else if (to.container !== undefined) {
      const folder = await this.stat(ctx, dav, parseWebdavId(to.container));
      if (folder.type !== 'directory') throw badRequest(`'${folder.basename}' is a file; move things into a folder.`);
      parent = folder.filename;
    }
    const destination = path.posix.join(parent, to.title ?? source.basename);
    if (destination === source.filename) return { before, after: before, replaced: null };
    if (source.type === 'directory' && destination.startsWith(`${source.filename}/`)) throw badRequest(`'${source.filename}' cannot be moved into itself.`);
    if (source.filename.startsWith(`${destination}/`)) {
      throw conflict(`'${destination}' holds '${source.filename}', so it cannot be replaced by it; choose another name.`);
    }
    const existing = await this.statOrNull(ctx, dav, destination);
    if (existing && !to.overwrite) {
      throw conflict(`'${destination}' already exists on the WebDAV server; choose another name, or send "overwrite": true to replace it.`);
    }
    try {
      await this.move(ctx, dav, source.filename, destination, to.overwrite, source.filename);
    } catch (error) {
      // 412: the name was taken between the check and the MOVE (Overwrite: F held)
      if (isRefusedAs(error, 412)) {
        throw conflict(`'${destination}' appeared on the WebDAV server meanwhile; nothing was replaced.`);
      }
      throw error;
    }
    const after = nodeOf({ ...source, filename: destination, basename: path.posix.basename(destination) });
    return { before, after, replaced: existing ? { title: existing.basename, into: { kind: 'deleted' } } : null };
  }

  /**
   * MKCOL (RFC 4918 §9.3), after a PROPFIND of the name: the RFC answers 405 when the name
   * is taken, but rclone serve webdav answers 201 for a folder that exists (its file
   * system's Mkdir succeeds), so the look comes first and the 405 stays as the backstop.
   */
  async createFolder(ctx: TargetContext, containerId: string | null, title: string): Promise<ResourceNode> {
    const dav = this.connect(ctx);
    let parent = '/';
    if (containerId !== null) {
      const folder = await this.stat(ctx, dav, parseWebdavId(containerId));
      if (folder.type !== 'directory') throw badRequest(`'${folder.basename}' is a file; a new folder goes into a folder.`);
      parent = folder.filename;
    }
    const folder = path.posix.join(parent, title);
    const taken = () => conflict(`'${folder}' already exists on the WebDAV server; choose another name.`);
    if (await this.statOrNull(ctx, dav, folder)) throw taken();
    try {
      await this.call(ctx, folder, (signal) => dav.client.createDirectory(folder, { signal }));
    } catch (error) {
      if (isRefusedAs(error, 405)) throw taken();
      throw error;
    }
    return nodeOf({ filename: folder, basename: title, type: 'directory', size: 0, lastmod: '', etag: null });
  }

  /** Ferry's temporary upload names are hidden from every listing: a file given one would vanish. */
  checkName(name: string): string | null {
    return isFerryTempName(name) ? "it has the form of Ferry's temporary upload names, which listings hide" : null;
  }

  /** One request (a webdav-client call), cut off after the timeout; errors as FerryErrors. */
  private async call<T>(ctx: TargetContext, what: string, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const timeoutMs = this.options.timeoutMs ?? 60_000;
    const timeout = AbortSignal.timeout(timeoutMs);
    try {
      return await fn(derivedSignal(ctx.signal, timeout));
    } catch (error) {
      if (ctx.signal.aborted) throw new CancelledError();
      if (timeout.aborted) throw new FerryError(504, 'upstream_unavailable', 'The WebDAV server did not answer in time; try again later.');
      throw toFerryError(error, what, await reasonOf((error as { response?: Response }).response));
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

/** What one write() learns as it goes: folders' children, and whether times can be set. */
interface WriteSession {
  /** children by name of each folder written into (temp names left out), listed once */
  folders: Map<string, Promise<Map<string, FileStat>>>;
  /** each folder found or made (or being made): the destination, then each one a file needs */
  dirs: Map<string, Promise<void>>;
  /** a PROPPATCH's answer for this write: its first try, while under way, decides for the others */
  setMtime: 'untried' | 'works' | 'refused' | Promise<boolean>;
  /** entries whose modification time the server did not keep (reported in entry order) */
  lostMtimes: Set<Entry>;
  /** what the server is known to do (server-traits.ts): with atomic PUTs each file is one PUT onto its name */
  server: ServerRecognition;
  /** the one look (PROPFIND Depth 0) at a file's temporary copy for the recognition's step 2, once asked (lookForModDavFs) */
  look: Promise<void> | null;
}

/** which list of the outcome a file written (or left as it was) goes into */
type WrittenAs = 'created' | 'updated' | 'ignored';
/** One entry's place in the outcome: its list, or its error. */
type FileResult = { path: string; entry?: Entry } & ({ list: WrittenAs; destination: string; error?: undefined } | { error: string } | { folder: true; error?: undefined });

interface Upload {
  destination: string;
  entry: Entry;
  open: () => Promise<Readable>;
  size: number | null;
  overwrite: boolean;
}

/**
 * The file's time, and the one that may be sent as X-OC-MTime: Nextcloud fails the whole PUT
 * for one of a day after 1970 or less (apps/dav MtimeSanitizer), so such a time is not sent
 * and counts as not kept.
 */
function mtimeOf(entry: Entry): { wanted: Date | null; mtime: Date | null } {
  const wanted = entry.mtime && !Number.isNaN(entry.mtime.getTime()) ? entry.mtime : null;
  return { wanted, mtime: wanted && wanted.getTime() > 86_400_000 ? wanted : null };
}

function mtimeHeader(mtime: Date | null): Record<string, string> {
  return mtime ? { 'x-oc-mtime': String(Math.floor(mtime.getTime() / 1000)) } : {};
}

/** The job report's sentence for files whose modification time the server did not keep. */
function lostMtimesNote(paths: string[]): string {
  const shown = paths.slice(0, 5).map((p) => `'${p}'`).join(', ');
  const more = paths.length > 5 ? ` and ${paths.length - 5} more` : '';
  const count = paths.length === 1 ? '1 file carries' : `${paths.length} files carry`;
  return `The WebDAV server does not let clients set modification times (it ignored X-OC-MTime, and refuses a PROPPATCH of getlastmodified), so ${count} the time of the upload instead of ${paths.length === 1 ? 'its' : 'their'} own: ${shown}${more}.`;
}

/** Whether `error` is the server's refusal with `status` (toFerryError words 405/409/412/423 as conflicts naming it). */
function isRefusedAs(error: unknown, status: number): boolean {
  return error instanceof FerryError && error.status === 409 && error.message.includes(`(HTTP ${status}`);
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
