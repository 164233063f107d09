// Test harness for the HTTP layer: a real core (createCore) behind a real server on a
// loopback port, plus helpers for real ZIPs (system zip/unzip) and workspace snapshots.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, readlink, rm, stat, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { inspect, promisify } from 'node:util';
import { isFinishedStatus, type Job } from '../../shared/api.js';
import { makeConfig, type FerryConfig } from '../../electron/core/config.js';
import { createCore, type FerryCore } from '../../electron/core/ferry-core.js';
import { MemorySecretStore } from '../../electron/core/keychain/memory.js';
import type { SecretStore } from '../../electron/core/keychain/port.js';
import type { Limits } from '../../electron/core/limits.js';
import type { Target } from '../../electron/core/target.js';
import { LocalTarget } from '../../electron/core/targets/local/index.js';
import { startServer, type ServerOptions } from '../../electron/server/server.js';
import { recordTestSecret, testLogFile } from '../support/ferry-process.js';

export const run = promisify(execFile);

export interface Ferry {
  core: FerryCore;
  url: string;
  port: number;
  key: string;
  root: string;
  dataDir: string;
  workspace: string;
  /** fetch relative to the server */
  fetch(pathname: string, init?: RequestInit): Promise<Response>;
  /** headers carrying the access key as the local target's token */
  auth(extra?: Record<string, string>): Record<string, string>;
  bearer(extra?: Record<string, string>): Record<string, string>;
  close(): Promise<void>;
}

export interface StartOptions {
  targets?: (config: FerryConfig, secrets: SecretStore) => Target[];
  limits?: Partial<Limits>;
  server?: Partial<ServerOptions>;
  secrets?: SecretStore;
}

export async function startFerry(options: StartOptions = {}): Promise<Ferry> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'ferry-api-'));
  const dataDir = path.join(root, 'data');
  const workspace = path.join(root, 'workspace');
  const config = makeConfig({ dataDir, workspace, limits: options.limits as Limits | undefined, jobConcurrency: 2 });
  const core = await createCore(config, {
    secrets: options.secrets ?? new MemorySecretStore(),
    targets: options.targets ?? ((c) => [new LocalTarget({ root: c.workspace })]),
  });
  const runLog = openRunLog(options.server);
  const server = await startServer(core, { host: '127.0.0.1', port: 0, logger: false, ...runLog?.serverOptions, ...options.server, ...runLog?.override });
  const key = core.accessKey;
  if (runLog) {
    recordTestSecret(key);
    runLog.watch(server.app.server);
  }
  return {
    core,
    url: server.url,
    port: server.port,
    key,
    root,
    dataDir,
    workspace,
    fetch: (pathname, init) => fetch(new URL(pathname, server.url), init),
    auth: (extra = {}) => ({ 'service-source-token': key, 'service-destination-token': key, ...extra }),
    bearer: (extra = {}) => ({ authorization: `Bearer ${key}`, ...extra }),
    async close() {
      await server.app.close();
      await core.close();
      runLog?.close();
      await rm(root, { recursive: true, force: true });
    },
  };
}

/**
 * With FERRY_TEST_LOG_DIR set: this server's log goes to a file of the test run (see
 * test/support/ferry-process.ts) — the error log (on even where a test turned it off: it
 * changes no response), a line per request with the body of every error response, and the
 * worker's console.error/warn (the job service reports failed jobs there). A test's own
 * logStream still gets every line. Without the variable: null, nothing changes.
 */
function openRunLog(requested: Partial<ServerOptions> | undefined) {
  const file = testLogFile('harness');
  if (!file) return null;
  const log = createWriteStream(file, { flags: 'a' });
  log.on('error', () => {});
  captureConsole(log);
  const own = requested?.logStream;
  const logStream = own
    ? new Writable({
        write(chunk: Buffer, _encoding, callback) {
          log.write(chunk);
          own.write(chunk, callback);
        },
      })
    : log;
  return {
    serverOptions: { logger: true, logStream } satisfies Partial<ServerOptions>,
    /** a test's own stream is teed, not replaced */
    override: own ? { logStream } : {},
    watch(server: http.Server) {
      server.prependListener('request', (request: http.IncomingMessage, response: http.ServerResponse) => logExchange(log, request, response));
    },
    close: () => {
      releaseConsole(log);
      log.end();
    },
  };
}

const ERROR_BODY_BYTES = 4096;

/** `<time> <method> <url> <status>` plus the body of an error response, once it is sent. */
function logExchange(log: WriteStream, request: http.IncomingMessage, response: http.ServerResponse): void {
  const kept: Buffer[] = [];
  let size = 0;
  const keep = (chunk: unknown, encoding: unknown) => {
    if (response.statusCode < 400 || size >= ERROR_BODY_BYTES || chunk === undefined || chunk === null || typeof chunk === 'function') return;
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8') : Buffer.from(chunk as Uint8Array);
    kept.push(bytes.subarray(0, ERROR_BODY_BYTES - size));
    size += bytes.length;
  };
  const raw = response as unknown as { write: (...args: unknown[]) => boolean; end: (...args: unknown[]) => unknown };
  const write = raw.write;
  const end = raw.end;
  raw.write = function (this: unknown, ...args: unknown[]) {
    keep(args[0], args[1]);
    return write.apply(this, args);
  };
  raw.end = function (this: unknown, ...args: unknown[]) {
    keep(args[0], args[1]);
    return end.apply(this, args);
  };
  response.once('close', () => {
    const body = kept.length ? ` ${Buffer.concat(kept).toString('utf8').replace(/\s+/g, ' ')}` : '';
    log.write(`${new Date().toISOString()} ${request.method} ${request.url} ${response.statusCode}${body}\n`);
  });
}

/** console.error/warn of this worker, copied into every open run log (the originals still print). */
const consoleLogs = new Set<WriteStream>();
let consolePatched = false;
function captureConsole(log: WriteStream): void {
  consoleLogs.add(log);
  if (consolePatched) return;
  consolePatched = true;
  for (const level of ['error', 'warn'] as const) {
    const original = console[level].bind(console);
    console[level] = (...args: unknown[]) => {
      const line = args.map((arg) => (arg instanceof Error ? `${arg.message}\n${arg.stack ?? ''}` : typeof arg === 'string' ? arg : inspect(arg))).join(' ');
      for (const open of consoleLogs) open.write(`${new Date().toISOString()} console.${level}: ${line}\n`);
      original(...args);
    };
  }
}
function releaseConsole(log: WriteStream): void {
  consoleLogs.delete(log);
}

/** Writes files (path → content) under dir, creating folders. */
export async function writeTree(dir: string, files: Record<string, string | Buffer>): Promise<void> {
  for (const [relative, content] of Object.entries(files)) {
    const file = path.join(dir, relative);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, content);
  }
}

/**
 * Every path under dir with its kind and sha256 (symlinks by their target), so a test can
 * say "byte-for-byte as it was".
 */
export async function snapshotTree(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  async function walk(current: string, prefix: string) {
    let names: string[];
    try {
      names = (await readdir(current)).sort();
    } catch {
      return;
    }
    for (const name of names) {
      const full = path.join(current, name);
      const relative = prefix ? `${prefix}/${name}` : name;
      const info = await stat(full).catch(() => null);
      const link = await readlink(full).catch(() => null);
      if (link !== null) out[relative] = `link:${link}`;
      else if (info?.isDirectory()) {
        out[relative] = 'dir';
        await walk(full, relative);
      } else out[relative] = `file:${createHash('sha256').update(await readFile(full)).digest('hex')}`;
    }
  }
  await walk(dir, '');
  return out;
}

/**
 * A ZIP made by the system `zip` from the contents of `dir` (extra args: -y, -P x, ...),
 * under a UTF-8 locale as on a desktop. Note: Info-ZIP on Linux stores non-ASCII names as
 * UTF-8 bytes WITHOUT the UTF-8 flag; tests needing such names use a flagging writer.
 */
export async function zipFolder(dir: string, zipPath: string, args: string[] = [], members = ['.']): Promise<Buffer> {
  await run('zip', ['-q', '-r', ...args, zipPath, ...members], { cwd: dir, env: { ...process.env, LC_ALL: 'C.UTF-8' } });
  return readFile(zipPath);
}

export async function unzipTo(zipPath: string, dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  await run('unzip', ['-q', zipPath, '-d', dir]);
}

export function uploadForm(zip: Buffer, field = 'service-file'): FormData {
  const form = new FormData();
  form.append(field, new Blob([new Uint8Array(zip)], { type: 'application/zip' }), 'upload.zip');
  return form;
}

export async function waitForJob(ferry: Ferry, ticket: string, timeoutMs = 30_000): Promise<Job> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await ferry.fetch(`/api_v1/jobs/${ticket}/`, { headers: ferry.bearer() });
    const job = (await response.json()) as Job;
    if (isFinishedStatus(job.status)) return job;
    if (Date.now() > deadline) throw new Error(`job ${ticket} still ${job.status}`);
    await new Promise((resolve) => setTimeout(resolve, 40));
  }
}

/** A raw HTTP request, for headers fetch will not let us set (Host). */
export function rawRequest(
  port: number,
  options: { method?: string; path: string; headers?: Record<string, string>; body?: string },
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port, method: options.method ?? 'GET', path: options.path, headers: options.headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString('utf8') }));
      response.on('error', reject);
    });
    request.on('error', reject);
    if (options.body !== undefined) request.write(options.body);
    request.end();
  });
}

/** The contract's error shape, checked field for field. */
export async function expectApiError(response: Response, status: number, code: string): Promise<{ error: string; code: string }> {
  const text = await response.text();
  if (response.status !== status) throw new Error(`expected ${status} ${code}, got ${response.status}: ${text}`);
  const body = JSON.parse(text) as { error: string; code: string };
  if (Object.keys(body).sort().join(',') !== 'code,error') throw new Error(`error shape is ${text}`);
  if (body.code !== code) throw new Error(`expected code ${code}, got ${text}`);
  if (typeof body.error !== 'string' || body.error.length < 10) throw new Error(`error sentence too short: ${text}`);
  if (/\/tmp\/|ferry-api-|at .*\.ts:\d+/.test(body.error)) throw new Error(`error leaks a path or stack: ${text}`);
  return body;
}

/** A target under another name (e.g. a second local folder for transfers). */
export function renamed(target: Target, name: string, readable = name): Target {
  return {
    info: { ...target.info, name, readable_name: readable },
    list: (ctx, scope) => target.list(ctx, scope),
    detail: (ctx, id) => target.detail(ctx, id),
    read: (ctx, id) => target.read(ctx, id),
    write: (ctx, containerId, entries, options) => target.write(ctx, containerId, entries, options),
  };
}

/** Finds a resource by its title path ("Data/sub/a.txt") in a flat listing. */
export function findByPath<T extends { id: string; title: string; container: string }>(list: T[], titlePath: string): T | undefined {
  const parts = titlePath.split('/');
  let container = 'None';
  let found: T | undefined;
  for (const part of parts) {
    found = list.find((item) => item.container === container && item.title === part);
    if (!found) return undefined;
    container = found.id;
  }
  return found;
}
