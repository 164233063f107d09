import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { CancelledError, forbidden, notFound, unauthorized } from '../../errors.js';
import { isPerFileFailure } from '../../remote/file-failure.js';
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

/**
 * A storage target held in memory, for tests of the job runner. Paths are '/'-separated;
 * ids are 'm' + base64url(path), so they never hold '.' or '/'.
 */
export interface MemoryTargetOptions {
  name?: string;
  credential?: TargetInfo['credential'];
  /** the token it accepts (default: any non-empty token) */
  token?: string;
  /** files: path → content; folders are implied by their files (or listed in `folders`) */
  files?: Record<string, string | Buffer>;
  folders?: string[];
  /** paths whose bytes come out with one byte flipped while their reported hashes stay right */
  corrupt?: string[];
  /** paths whose record after a write (WriteOutcome.stored) gives a wrong md5, as a faulty service might */
  misrecord?: string[];
  /** called before each file is written; a test can block here */
  beforeWriteFile?(path: string): Promise<void> | void;
}

interface Node {
  kind: 'file' | 'folder';
  data: Buffer;
  mtime: Date;
}

const ALGORITHMS = ['md5', 'sha256'];

export class MemoryTarget implements Target {
  readonly info: TargetInfo;
  readonly nodes = new Map<string, Node>();
  /** how many times write() has been called */
  writes = 0;
  /** tokens the target has been called with */
  readonly tokensSeen: string[] = [];

  constructor(private readonly options: MemoryTargetOptions = {}) {
    this.info = {
      name: options.name ?? 'memory',
      readable_name: `Memory (${options.name ?? 'memory'})`,
      supported_actions: fullActions(),
      supported_hash_algorithms: ALGORITHMS,
      credential: options.credential ?? 'remote',
    };
    for (const folder of options.folders ?? []) this.addFolder(folder);
    for (const [path, content] of Object.entries(options.files ?? {})) this.putFile(path, Buffer.from(content));
  }

  static idOf(path: string): string {
    return `m${Buffer.from(path, 'utf8').toString('base64url')}`;
  }

  static pathOf(id: string): string {
    return Buffer.from(id.slice(1), 'base64url').toString('utf8');
  }

  /** A file's content as text (undefined when absent). */
  text(path: string): string | undefined {
    const node = this.nodes.get(path);
    return node?.kind === 'file' ? node.data.toString('utf8') : undefined;
  }

  putFile(path: string, data: Buffer): void {
    const parts = path.split('/');
    for (let i = 1; i < parts.length; i++) this.addFolder(parts.slice(0, i).join('/'));
    this.nodes.set(path, { kind: 'file', data, mtime: new Date() });
  }

  addFolder(path: string): void {
    if (!this.nodes.has(path)) this.nodes.set(path, { kind: 'folder', data: Buffer.alloc(0), mtime: new Date() });
  }

  async *list(ctx: TargetContext, scope?: ListScope): AsyncIterable<ResourceNode> {
    this.check(ctx);
    for (const path of [...this.nodes.keys()].sort()) {
      const node = this.toNode(path);
      if (scope?.container === undefined || scope.container === node.container) yield node;
    }
  }

  async detail(ctx: TargetContext, id: string): Promise<ResourceInfo> {
    this.check(ctx);
    const path = this.find(id);
    const node = this.nodes.get(path)!;
    return {
      ...this.toNode(path),
      date_created: null,
      date_modified: null,
      hashes: node.kind === 'file' ? hashesOf(node.data) : {},
      extra: {},
    };
  }

  async read(ctx: TargetContext, id: string): Promise<ReadResult> {
    this.check(ctx);
    const rootPath = this.find(id);
    const root = this.toNode(rootPath);
    const parent = rootPath.includes('/') ? rootPath.slice(0, rootPath.lastIndexOf('/') + 1) : '';
    const paths = [...this.nodes.keys()].filter((path) => path === rootPath || path.startsWith(`${rootPath}/`)).sort();
    const nodes = this.nodes;
    const corrupt = new Set(this.options.corrupt ?? []);
    async function* entries(): AsyncIterable<Entry> {
      for (const path of paths) {
        const node = nodes.get(path)!;
        const data = node.data;
        yield {
          path: path.slice(parent.length),
          kind: node.kind,
          size: node.kind === 'file' ? data.length : null,
          mtime: node.mtime,
          hashes: node.kind === 'file' ? hashesOf(data) : {},
          async open() {
            if (node.kind !== 'file') throw new Error('folders have no bytes');
            const out = Buffer.from(data);
            if (corrupt.has(path) && out.length > 0) out[0] = out[0]! ^ 0x01;
            return Readable.from([out]);
          },
        };
      }
    }
    return { title: root.title, root, entries: entries() };
  }

  async write(ctx: TargetContext, containerId: string | null, entries: AsyncIterable<Entry>, options: WriteOptions): Promise<WriteOutcome> {
    this.check(ctx);
    this.writes += 1;
    const outcome: WriteOutcome = { created: [], updated: [], ignored: [], fileErrors: [] };
    let base = '';
    let topName: string | null = null;
    if (containerId !== null) {
      const path = this.find(containerId);
      if (this.nodes.get(path)!.kind !== 'folder') throw forbidden('Files can only be written into a folder.');
      base = `${path}/`;
    }
    for await (const entry of entries) {
      if (options.signal.aborted) throw new CancelledError();
      let relative = entry.path;
      if (containerId === null) {
        const [first, ...rest] = entry.path.split('/');
        if (topName === null) {
          topName = this.distinctTopName(first!);
          this.addFolder(topName);
          outcome.newResource = { id: MemoryTarget.idOf(topName), title: topName };
          outcome.created.push(entry.path.split('/')[0]!);
        }
        relative = [topName, ...rest].join('/');
        if (rest.length === 0) continue;
      }
      const target = `${base}${relative}`;
      if (entry.kind === 'folder') {
        if (!this.nodes.has(target)) {
          this.addFolder(target);
          outcome.created.push(entry.path);
        }
        continue;
      }
      await this.options.beforeWriteFile?.(entry.path);
      let data: Buffer;
      try {
        data = await buffer(await entry.open());
      } catch (error) {
        // as the remote writers: a problem with one file (its source failed its check) is that file's
        if (!isPerFileFailure(error, options.signal)) throw error;
        outcome.fileErrors.push({ path: entry.path, error: error.message });
        continue;
      }
      if (options.signal.aborted) throw new CancelledError();
      const existing = this.nodes.get(target);
      if (existing && (options.duplicateAction === 'ignore' || existing.data.equals(data))) {
        outcome.ignored.push(entry.path);
        continue;
      }
      this.putFile(target, data);
      outcome[existing ? 'updated' : 'created'].push(entry.path);
      // its record of the stored file, as a service answers an upload (verify after write)
      const md5 = this.options.misrecord?.includes(entry.path) ? '0'.repeat(32) : createHash('md5').update(data).digest('hex');
      (outcome.stored ??= new Map()).set(entry.path, { hashes: { md5, sha256: createHash('sha256').update(data).digest('hex') }, size: data.length });
    }
    return outcome;
  }

  private distinctTopName(name: string): string {
    if (!this.nodes.has(name)) return name;
    for (let n = 2; ; n++) if (!this.nodes.has(`${name} (${n})`)) return `${name} (${n})`;
  }

  private check(ctx: TargetContext): void {
    this.tokensSeen.push(ctx.token);
    if (!ctx.token || (this.options.token !== undefined && ctx.token !== this.options.token)) {
      throw unauthorized(`The ${this.info.readable_name} token is invalid or expired.`);
    }
  }

  private find(id: string): string {
    const path = id.startsWith('m') ? MemoryTarget.pathOf(id) : '';
    if (!path || !this.nodes.has(path)) throw notFound(`There is no resource '${id}' in ${this.info.readable_name}.`);
    return path;
  }

  private toNode(path: string): ResourceNode {
    const node = this.nodes.get(path)!;
    const slash = path.lastIndexOf('/');
    return {
      kind: node.kind === 'folder' ? 'container' : 'item',
      kind_name: node.kind,
      id: MemoryTarget.idOf(path),
      container: slash < 0 ? null : MemoryTarget.idOf(path.slice(0, slash)),
      title: path.slice(slash + 1),
    };
  }
}

function hashesOf(data: Buffer): Record<string, string> {
  return Object.fromEntries(ALGORITHMS.map((algorithm) => [algorithm, createHash(algorithm).update(data).digest('hex')]));
}
