import { createHash, randomBytes } from 'node:crypto';

/**
 * The OSF emulator's data model: users, tokens, nodes (projects and components), storage
 * providers and their file trees (osfstorage-like: every file and folder has a 24-hex id,
 * paths are `/<id>` and `/<id>/`), file versions with real md5/sha256, plus the fault
 * injection tests use. Built through the small builder methods below.
 */

export type Permission = 'read' | 'write' | 'admin';
export type Scope = 'osf.full_read' | 'osf.full_write';

export interface EmuUser {
  id: string;
  fullName: string;
}

export interface EmuToken {
  userId: string;
  scopes: Scope[];
}

export interface EmuNode {
  id: string;
  /** stored as OSF stores it: HTML tags stripped, then HTML-escaped */
  title: string;
  description: string;
  category: string;
  public: boolean;
  parent: string | null;
  tags: string[];
  created: Date;
  createdMicros: number;
  modified: Date;
  modifiedMicros: number;
  contributors: Map<string, Permission>;
  /** provider name → id of its root folder */
  providers: Map<string, string>;
  /** osfstorage quota in bytes (5 GB private by default on OSF) */
  quotaBytes: number;
  deleted: boolean;
}

export interface EmuVersion {
  bytes: Buffer;
  md5: string;
  sha256: string;
  modified: Date;
  modifiedMicros: number;
}

export interface EmuFileNode {
  id: string;
  nodeId: string;
  provider: string;
  kind: 'file' | 'folder';
  name: string;
  /** null for a provider's root folder */
  parentId: string | null;
  guid: string | null;
  tags: string[];
  versions: EmuVersion[];
  created: Date | null;
  createdMicros: number;
}

export interface Fault {
  /** matches when the request path (no query) contains this string */
  path: string;
  method?: string;
  /** which server: the API, WaterButler or the storage host (default: any) */
  server?: 'api' | 'files' | 'storage';
  status: number;
  /** seconds, sent as Retry-After */
  retryAfter?: number;
  /** a body instead of the default error envelope, and its content type */
  body?: string;
  contentType?: string;
  /** how many matching requests fail (default 1) */
  times?: number;
}

export interface LoggedRequest {
  server: 'api' | 'files' | 'storage' | 'web';
  method: string;
  url: string;
  authorization: boolean;
  accept?: string;
  status?: number;
  /** when it arrived (Date.now()), for rate checks */
  at: number;
}

const GUID_ALPHABET = 'abcdefghijkmnpqrstuvwxyz23456789';

export class OsfState {
  readonly users = new Map<string, EmuUser>();
  readonly tokens = new Map<string, EmuToken>();
  readonly nodes = new Map<string, EmuNode>();
  readonly files = new Map<string, EmuFileNode>();
  readonly faults: Fault[] = [];
  readonly requests: LoggedRequest[] = [];
  /** signed storage URL key → file version, as GCS signed URLs would be */
  readonly signedUrls = new Map<string, { fileId: string; version: number; expires: number }>();
  private guidCounter = 0;
  private fileCounter = 0;
  private readonly filePrefix = randomBytes(6).toString('hex');
  private clockMs = Date.parse('2026-02-19T02:56:49.128Z');

  /** Make the next `times` requests whose path contains `path` fail with `status`. */
  failNext(fault: Fault): void {
    this.faults.push({ times: 1, ...fault });
  }

  takeFault(server: LoggedRequest['server'], method: string, path: string): Fault | null {
    const index = this.faults.findIndex(
      (fault) => path.includes(fault.path) && (!fault.method || fault.method.toUpperCase() === method) && (!fault.server || fault.server === server),
    );
    if (index < 0) return null;
    const fault = this.faults[index]!;
    fault.times = (fault.times ?? 1) - 1;
    if (fault.times <= 0) this.faults.splice(index, 1);
    return fault;
  }

  /** A monotonically advancing clock, so dates differ and order is stable. */
  tick(): { date: Date; micros: number } {
    this.clockMs += 1000 + (this.guidCounter % 7);
    return { date: new Date(this.clockMs), micros: (this.clockMs % 1000) * 1000 + ((this.fileCounter * 37) % 1000) };
  }

  newGuid(): string {
    let n = ++this.guidCounter * 7919 + 12345;
    let guid = '';
    for (let i = 0; i < 5; i++) {
      guid += GUID_ALPHABET[n % GUID_ALPHABET.length];
      n = Math.floor(n / GUID_ALPHABET.length);
    }
    return this.nodes.has(guid) || this.users.has(guid) ? this.newGuid() : guid;
  }

  newFileId(): string {
    return this.filePrefix + (++this.fileCounter).toString(16).padStart(12, '0');
  }

  // ---- builder ----

  addUser(fullName = 'Test User'): EmuUser {
    const user = { id: this.newGuid(), fullName };
    this.users.set(user.id, user);
    return user;
  }

  /** A personal access token for `userId`; returns the token string. */
  addToken(userId: string, scopes: Scope[] = ['osf.full_read', 'osf.full_write']): string {
    const token = randomBytes(24).toString('base64url');
    this.tokens.set(token, { userId, scopes });
    return token;
  }

  addNode(options: {
    title: string;
    owner: string;
    parent?: string | null;
    category?: string;
    public?: boolean;
    description?: string;
    tags?: string[];
    providers?: string[];
    /** title given already escaped (as the API stores it); default: escape it */
    rawTitle?: boolean;
  }): EmuNode {
    const { date, micros } = this.tick();
    const parent = options.parent ?? null;
    const node: EmuNode = {
      id: this.newGuid(),
      title: options.rawTitle ? options.title : escapeTitle(options.title),
      description: options.description ?? '',
      category: options.category ?? (parent ? '' : 'project'),
      public: options.public ?? false,
      parent,
      tags: options.tags ?? [],
      created: date,
      createdMicros: micros,
      modified: date,
      modifiedMicros: micros,
      contributors: new Map([[options.owner, 'admin' as Permission]]),
      providers: new Map(),
      quotaBytes: 5 * 1024 ** 3,
      deleted: false,
    };
    // Components inherit the parent's contributors (as OSF offers when creating one).
    if (parent) for (const [user, permission] of this.nodes.get(parent)?.contributors ?? []) node.contributors.set(user, permission);
    this.nodes.set(node.id, node);
    for (const provider of options.providers ?? ['osfstorage']) this.addProvider(node.id, provider);
    return node;
  }

  addContributor(nodeId: string, userId: string, permission: Permission): void {
    this.node(nodeId).contributors.set(userId, permission);
  }

  addProvider(nodeId: string, provider: string): string {
    const root: EmuFileNode = {
      id: this.newFileId(), nodeId, provider, kind: 'folder', name: '', parentId: null, guid: null, tags: [], versions: [], created: null, createdMicros: 0,
    };
    this.files.set(root.id, root);
    this.node(nodeId).providers.set(provider, root.id);
    return root.id;
  }

  /** Creates the folders of `path` ("/a/b/") below a provider's root as needed. */
  addFolder(nodeId: string, path: string, provider = 'osfstorage'): EmuFileNode {
    let current = this.root(nodeId, provider);
    for (const name of path.split('/').filter(Boolean)) {
      current = this.childNamed(current.id, name, 'folder') ?? this.createChild(current, name, 'folder');
    }
    return current;
  }

  /** A file at `path` ("/dir/a.txt") with these bytes; a new version if it exists. */
  addFile(nodeId: string, path: string, content: Buffer | string, provider = 'osfstorage'): EmuFileNode {
    const parts = path.split('/').filter(Boolean);
    const name = parts.pop();
    if (!name) throw new Error(`bad path ${path}`);
    const folder = this.addFolder(nodeId, `/${parts.join('/')}/`, provider);
    const existing = this.childNamed(folder.id, name, 'file');
    const file = existing ?? this.createChild(folder, name, 'file');
    this.addVersion(file, Buffer.isBuffer(content) ? content : Buffer.from(content));
    return file;
  }

  // ---- model operations ----

  node(id: string): EmuNode {
    const node = this.nodes.get(id);
    if (!node) throw new Error(`no node ${id}`);
    return node;
  }

  root(nodeId: string, provider: string): EmuFileNode {
    const rootId = this.node(nodeId).providers.get(provider);
    if (!rootId) throw new Error(`node ${nodeId} has no provider ${provider}`);
    return this.files.get(rootId)!;
  }

  children(folderId: string): EmuFileNode[] {
    return [...this.files.values()].filter((file) => file.parentId === folderId);
  }

  childNamed(folderId: string, name: string, kind: 'file' | 'folder'): EmuFileNode | null {
    return this.children(folderId).find((file) => file.name === name && file.kind === kind) ?? null;
  }

  createChild(parent: EmuFileNode, name: string, kind: 'file' | 'folder'): EmuFileNode {
    const { date, micros } = this.tick();
    const file: EmuFileNode = {
      id: this.newFileId(), nodeId: parent.nodeId, provider: parent.provider, kind, name, parentId: parent.id, guid: null, tags: [], versions: [],
      created: kind === 'file' ? date : null, createdMicros: micros,
    };
    this.files.set(file.id, file);
    return file;
  }

  /** Removes a file, or a folder with everything below it (a provider's root itself stays). */
  removeTree(file: EmuFileNode): void {
    for (const child of this.children(file.id)) this.removeTree(child);
    if (file.parentId !== null) this.files.delete(file.id);
  }

  /** Puts a file or folder (and everything below it) into `folder` as `name`, keeping its ids. */
  moveTree(file: EmuFileNode, folder: EmuFileNode, name: string): void {
    file.parentId = folder.id;
    file.name = name;
    const relocate = (node: EmuFileNode) => {
      node.nodeId = folder.nodeId;
      node.provider = folder.provider;
      for (const child of this.children(node.id)) relocate(child);
    };
    relocate(file);
  }

  addVersion(file: EmuFileNode, bytes: Buffer): EmuVersion {
    const { date, micros } = this.tick();
    const version: EmuVersion = {
      bytes,
      md5: createHash('md5').update(bytes).digest('hex'),
      sha256: createHash('sha256').update(bytes).digest('hex'),
      modified: date,
      modifiedMicros: micros,
    };
    file.versions.push(version);
    const node = this.node(file.nodeId);
    node.modified = date;
    node.modifiedMicros = micros;
    return version;
  }

  /** "/dir/a.txt" or "/dir/" for a folder; "/" for a root. */
  materializedPath(file: EmuFileNode): string {
    const names: string[] = [];
    let current: EmuFileNode | undefined = file;
    while (current && current.parentId !== null) {
      names.unshift(current.name);
      current = this.files.get(current.parentId);
    }
    return `/${names.join('/')}${file.kind === 'folder' && names.length > 0 ? '/' : ''}`;
  }

  usedBytes(nodeId: string): number {
    let total = 0;
    for (const file of this.files.values()) if (file.nodeId === nodeId) total += file.versions.at(-1)?.bytes.length ?? 0;
    return total;
  }

  permissionOf(userId: string | null, node: EmuNode): Permission | null {
    if (userId === null) return null;
    return node.contributors.get(userId) ?? null;
  }
}

/** OSF strips HTML tags from titles and returns them HTML-escaped (osf.md §5.6). */
export function escapeTitle(title: string): string {
  return title.replace(/<[^>]*>/g, '').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
