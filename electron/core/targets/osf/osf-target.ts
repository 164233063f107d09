import { verifyAdvertised } from '../../remote/advertised-fixity.js';
import { badRequest, notFound, throwIfAborted } from '../../errors.js';
import {
  fileOperations,
  fullActions,
  type DeleteOutcome,
  type MoveOutcome,
  type MoveTo,
  type DescriptiveMetadata,
  type Entry,
  type ListScope,
  type ReadResult,
  type ResourceInfo,
  type ResourceNode,
  type SearchPage,
  type SearchQuery,
  type Target,
  type TargetContext,
  type TargetInfo,
  type WriteOptions,
  type WriteOutcome,
  singleEntry,
} from '../../target.js';
import { OsfClient, type JsonApiResource, type OsfClientOptions } from './client.js';
import { nodeId, parseOsfId } from './ids.js';
import {
  fileHashes,
  fileInfo,
  fileToResource,
  nodeInfo,
  nodeTitle,
  nodeToResource,
  parentGuid,
  safeSegment,
  storageInfo,
  storageToResource,
} from './mapping.js';
import { OsfOperations } from './operations.js';
import { OsfWriter } from './writer.js';
import { searchOsfNodes } from './search.js';
import { creatorOf, licenseIdOf, nodeMetadata } from '../../metadata/osf.js';
import type { PipelineLimits } from '../../jobs/ordered-pipeline.js';

/**
 * What one write keeps in flight (TargetInfo.concurrency): files, each one WaterButler PUT,
 * and the sum of their sizes. OSF documents no limit on uploads in flight, only request
 * budgets (docs/targets/osf.md, Limits), which Ferry's rate per host (5 a second) keeps to
 * whatever is in flight: 5 at once fills that budget while a PUT takes up to a second, and
 * never exceeds it.
 */
export const OSF_IN_FLIGHT: PipelineLimits = { files: 5, bytes: 8 * 1024 * 1024 };

/**
 * OSF as a Ferry target. The tree: projects (top level) → components and storage
 * providers → folders → files. Reading a node streams its osfstorage at the node's own
 * level (where uploads into a node land), other providers as `<provider>/` subfolders and
 * components as subfolders named by their titles.
 */
export class OsfTarget implements Target {
  readonly info: TargetInfo = {
    name: 'osf',
    readable_name: 'OSF',
    supported_actions: fullActions(true),
    supported_hash_algorithms: ['md5', 'sha256'],
    credential: 'remote',
    supported_operations: fileOperations(),
    // metadata/osf.ts: a new project takes a transfer's description and keywords, and names the rest
    keepsMetadata: true,
    concurrency: OSF_IN_FLIGHT,
  };

  readonly client: OsfClient;
  private readonly operations: OsfOperations;

  constructor(options: OsfClientOptions) {
    this.client = new OsfClient(options);
    this.operations = new OsfOperations(this);
  }

  /** Files and folders in OSF Storage only (operations.ts says why). */
  deleteResource(ctx: TargetContext, id: string): Promise<DeleteOutcome> {
    return this.operations.delete(ctx, id);
  }

  moveResource(ctx: TargetContext, id: string, to: MoveTo): Promise<MoveOutcome> {
    return this.operations.move(ctx, id, to);
  }

  createFolder(ctx: TargetContext, containerId: string | null, title: string): Promise<ResourceNode> {
    return this.operations.createFolder(ctx, containerId, title);
  }

  async *list(ctx: TargetContext, scope?: ListScope): AsyncIterable<ResourceNode> {
    const { token, signal } = ctx;
    if (scope?.container === null) {
      for await (const node of this.client.list('users/me/nodes/', token, { sort: 'date_created', 'filter[parent]': 'null' }, signal)) {
        yield nodeToResource(node, null);
      }
      return;
    }
    if (scope?.container !== undefined) {
      yield* this.children(ctx, scope.container);
      return;
    }
    // Everything: all nodes first (so a component's parent is known), then each one's files.
    const nodes: JsonApiResource[] = [];
    for await (const node of this.client.list('users/me/nodes/', token, { sort: 'date_created' }, signal)) nodes.push(node);
    const visible = new Set(nodes.map((node) => node.id));
    for (const node of nodes) {
      const parent = parentGuid(node);
      // A component whose project the token cannot see is shown at the top level.
      yield nodeToResource(node, parent && visible.has(parent) ? nodeId(parent) : null);
    }
    for (const node of nodes) {
      for await (const provider of this.providers(ctx, node.id)) {
        yield storageToResource(node.id, provider.name);
        yield* this.walk(ctx, node.id, provider.name, provider.filesHref, storageToResource(node.id, provider.name).id, true);
      }
    }
  }

  private async *children(ctx: TargetContext, containerId: string): AsyncIterable<ResourceNode> {
    const ref = parseOsfId(containerId);
    if (ref.kind === 'node') {
      for await (const provider of this.providers(ctx, ref.node)) yield storageToResource(ref.node, provider.name);
      for await (const child of this.client.list(`nodes/${ref.node}/children/`, ctx.token, { sort: 'date_created' }, ctx.signal)) {
        yield nodeToResource(child, containerId);
      }
      return;
    }
    if (ref.kind === 'storage') {
      const provider = await this.provider(ctx, ref.node, ref.provider);
      yield* this.walk(ctx, ref.node, ref.provider, provider.filesHref, containerId, false);
      return;
    }
    const file = await this.client.get(`files/${ref.fileId}/`, ctx.token, ctx.signal);
    const href = file.relationships?.files?.links?.related?.href;
    if (file.attributes.kind !== 'folder' || !href) return;
    yield* this.walk(ctx, ref.node, ref.provider, href, containerId, false);
  }

  /** The files and folders below a folder listing, recursively when asked. */
  private async *walk(ctx: TargetContext, guid: string, provider: string, href: string, container: string, recursive: boolean): AsyncIterable<ResourceNode> {
    for await (const item of this.client.list(href, ctx.token, { sort: 'name' }, ctx.signal)) {
      const resource = fileToResource(item, guid, provider, container);
      yield resource;
      const inner = item.relationships?.files?.links?.related?.href;
      if (recursive && item.attributes.kind === 'folder' && inner) yield* this.walk(ctx, guid, provider, inner, resource.id, true);
    }
  }

  private async *providers(ctx: TargetContext, guid: string): AsyncIterable<{ name: string; filesHref: string; record: JsonApiResource }> {
    for await (const record of this.client.providers(guid, ctx.token, ctx.signal)) {
      const name = String(record.attributes.provider ?? record.attributes.name);
      const filesHref = record.relationships?.files?.links?.related?.href ?? `nodes/${guid}/files/${name}/`;
      yield { name, filesHref, record };
    }
  }

  async provider(ctx: TargetContext, guid: string, name: string): Promise<{ name: string; filesHref: string; record: JsonApiResource }> {
    for await (const provider of this.providers(ctx, guid)) if (provider.name === name) return provider;
    throw notFound(`The OSF node '${guid}' has no storage '${name}'.`);
  }

  /** Projects and components by title, filtered by OSF; files are not searched (see search.ts). */
  search(ctx: TargetContext, query: SearchQuery): Promise<SearchPage> {
    return searchOsfNodes(this.client, ctx, query);
  }

  async detail(ctx: TargetContext, id: string): Promise<ResourceInfo> {
    const ref = parseOsfId(id);
    if (ref.kind === 'node') return nodeInfo(await this.client.get(`nodes/${ref.node}/`, ctx.token, ctx.signal));
    if (ref.kind === 'storage') {
      await this.provider(ctx, ref.node, ref.provider);
      return storageInfo(ref.node, ref.provider);
    }
    return fileInfo(await this.fileRecord(ctx, ref.fileId, ref.node, ref.provider), ref.node, ref.provider);
  }

  /** A project's or component's title, description, tags and licence (metadata.ts); null for files and folders. */
  async describe(ctx: TargetContext, id: string): Promise<DescriptiveMetadata | null> {
    const ref = parseOsfId(id);
    if (ref.kind !== 'node') return null;
    const node = await this.client.get(`nodes/${ref.node}/`, ctx.token, ctx.signal);
    const licenseId = licenseIdOf(node);
    const license = licenseId ? await this.client.get(`licenses/${licenseId}/`, ctx.token, ctx.signal) : null;
    const creators = [];
    for await (const contributor of this.client.contributors(ref.node, ctx.token, ctx.signal)) {
      const creator = creatorOf(contributor);
      if (creator) creators.push(creator);
    }
    return nodeMetadata(node, typeof license?.attributes.name === 'string' ? license.attributes.name : null, creators);
  }

  /** A file record, checked to belong to the node and provider its Ferry id names. */
  async fileRecord(ctx: TargetContext, fileId: string, guid: string, provider: string): Promise<JsonApiResource> {
    const file = await this.client.get(`files/${fileId}/`, ctx.token, ctx.signal);
    const owner = file.relationships?.target?.data?.id ?? file.relationships?.node?.data?.id;
    if ((owner && owner !== guid) || file.attributes.provider !== provider) throw notFound(`No OSF file or folder has the id '${fileId}' in '${guid}'.`);
    return file;
  }

  async read(ctx: TargetContext, id: string): Promise<ReadResult> {
    const ref = parseOsfId(id);
    if (ref.kind === 'node') {
      const node = await this.client.get(`nodes/${ref.node}/`, ctx.token, ctx.signal);
      const info = nodeInfo(node);
      const title = safeSegment(info.title);
      return { title, root: info, entries: this.nodeEntries(ctx, node.id, title) };
    }
    if (ref.kind === 'storage') {
      const provider = await this.provider(ctx, ref.node, ref.provider);
      const root = storageToResource(ref.node, ref.provider);
      const title = safeSegment(ref.provider);
      return { title, root, entries: this.folderEntries(ctx, provider.filesHref, title, true) };
    }
    const file = await this.fileRecord(ctx, ref.fileId, ref.node, ref.provider);
    const root = fileInfo(file, ref.node, ref.provider);
    const title = safeSegment(root.title);
    if (file.attributes.kind === 'folder') {
      const href = file.relationships?.files?.links?.related?.href;
      if (!href) throw badRequest(`OSF gave no listing link for the folder '${root.title}'.`);
      return { title, root, entries: this.folderEntries(ctx, href, title, true) };
    }
    return { title, root, entries: singleEntry(this.fileEntry(ctx, file, title)) };
  }

  private async *nodeEntries(ctx: TargetContext, guid: string, prefix: string): AsyncIterable<Entry> {
    yield folderEntry(prefix, null);
    const used = new Set<string>();
    for await (const provider of this.providers(ctx, guid)) {
      if (provider.name === 'osfstorage') {
        for await (const entry of this.folderEntries(ctx, provider.filesHref, prefix, false)) {
          if (entry.path.split('/').length === prefix.split('/').length + 1) used.add(entry.path);
          yield entry;
        }
      } else {
        const path = `${prefix}/${safeSegment(provider.name)}`;
        used.add(path);
        yield* this.folderEntries(ctx, provider.filesHref, path, true);
      }
    }
    for await (const child of this.client.list(`nodes/${guid}/children/`, ctx.token, { sort: 'date_created' }, ctx.signal)) {
      let path = `${prefix}/${safeSegment(nodeTitle(child))}`;
      // A component named like a file or folder of its project keeps its guid to stay apart.
      if (used.has(path)) path = `${path} (${child.id})`;
      used.add(path);
      yield* this.nodeEntries(ctx, child.id, path);
    }
  }

  private async *folderEntries(ctx: TargetContext, href: string, prefix: string, includeSelf: boolean): AsyncIterable<Entry> {
    if (includeSelf) yield folderEntry(prefix, null);
    for await (const item of this.client.list(href, ctx.token, { sort: 'name' }, ctx.signal)) {
      throwIfAborted(ctx.signal);
      const path = `${prefix}/${safeSegment(String(item.attributes.name))}`;
      if (item.attributes.kind === 'folder') {
        const inner = item.relationships?.files?.links?.related?.href;
        if (inner) yield* this.folderEntries(ctx, inner, path, true);
        else yield folderEntry(path, null);
      } else {
        yield this.fileEntry(ctx, item, path);
      }
    }
  }

  private fileEntry(ctx: TargetContext, file: JsonApiResource, path: string): Entry {
    const a = file.attributes;
    const modified = typeof a.date_modified === 'string' ? new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(a.date_modified) ? a.date_modified : `${a.date_modified}Z`) : null;
    const wbUrl = file.links?.upload ?? file.links?.move;
    const client = this.client;
    return {
      path,
      kind: 'file',
      size: typeof a.size === 'number' ? a.size : null,
      mtime: modified && !Number.isNaN(modified.getTime()) ? modified : null,
      hashes: fileHashes(file),
      async open() {
        const advertised = { hashes: fileHashes(file), size: typeof a.size === 'number' ? a.size : null };
        if (wbUrl) return verifyAdvertised(await client.download(wbUrl, String(a.name), ctx.token, ctx.signal), advertised, { service: 'OSF', path });
        // No file-server link (unusual add-on): the web download link, without the token.
        const download = file.links?.download;
        if (!download) throw badRequest(`OSF gave no download link for '${String(a.name)}'.`);
        return verifyAdvertised(await client.download(download, String(a.name), null, ctx.signal), advertised, { service: 'OSF', path });
      },
    };
  }

  write(ctx: TargetContext, containerId: string | null, entries: AsyncIterable<Entry>, options: WriteOptions): Promise<WriteOutcome> {
    return new OsfWriter(this, ctx, options).run(containerId, entries);
  }
}

function folderEntry(path: string, mtime: Date | null): Entry {
  return {
    path,
    kind: 'folder',
    size: null,
    mtime,
    hashes: {},
    open: () => Promise.reject(new Error('a folder has no bytes')),
  };
}
