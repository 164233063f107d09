// File operations on OSF: files and folders in osfstorage, through WaterButler v1, at the
// links the API hands out (never built). Projects, components and storages themselves are
// not deleted or moved here, and other providers (GitHub, Dropbox …) are left alone: their
// WaterButler paths are not the API's file ids, so a moved file's new id could not be named.
// Every request and its evidence: docs/targets/osf.md "File operations".
import { badRequest, conflict, FerryError, notSupported } from '../../errors.js';
import type { DeleteOutcome, MoveOutcome, MoveTo, ResourceNode, TargetContext } from '../../target.js';
import { withoutQuery, type JsonApiResource } from './client.js';
import { fileNodeId, parseOsfId, storageId } from './ids.js';
import { fileInfo } from './mapping.js';
import type { OsfTarget } from './osf-target.js';
import { strictEncode } from './writer.js';

const PROVIDER = 'osfstorage';

/** A WaterButler entity as its v1 answers give it (wb-mkdir.201.json). */
interface WbEntity {
  attributes: { name: string; kind: 'file' | 'folder'; path: string; resource?: string };
}

/** Where a move or a new folder goes: WaterButler's folder path in a node, and the Ferry id of that folder. */
interface Place {
  guid: string;
  /** "/" (the storage's root) or "/<folder id>/" */
  path: string;
  containerId: string;
  /** the folder's materialized path, to refuse a folder into itself */
  materialized: string;
  /** the WaterButler URL that makes folders in it */
  newFolderUrl: string;
}

export class OsfOperations {
  constructor(private readonly target: OsfTarget) {}

  /** `DELETE <links.delete>` → 204; osfstorage keeps the file in OSF's own trash, out of reach of the API. */
  async delete(ctx: TargetContext, id: string): Promise<DeleteOutcome> {
    const { file, node } = await this.source(ctx, id, 'delete');
    const link = file.links?.delete ?? file.links?.move;
    if (!link) throw new FerryError(502, 'upstream_error', `OSF gave no delete link for '${node.title}'.`);
    const response = await this.target.client.fileRequest(withoutQuery(link), { method: 'DELETE', token: ctx.token, signal: ctx.signal });
    await response.body?.cancel();
    return { node, into: { kind: 'deleted' } };
  }

  /**
   * `POST <links.move>` with `{"action": "rename", "rename": …}` or `{"action": "move", "path":
   * "/<folder id>/", "resource": <guid>, "provider": "osfstorage", "rename"?: …}`, and
   * `"conflict": "warn"` (WaterButler's default is "replace"), so a taken name is a 409 and
   * nothing is replaced; "replace" only with `overwrite`.
   */
  async move(ctx: TargetContext, id: string, to: MoveTo): Promise<MoveOutcome> {
    const { file, node: before } = await this.source(ctx, id, 'move or rename');
    const title = to.title ?? before.title;
    const place = to.container === undefined ? null : await this.place(ctx, to.container);
    if ((place === null || place.containerId === before.container) && title === before.title) return { before, after: before, replaced: null };
    const materialized = String(file.attributes.materialized_path ?? '');
    if (place && file.attributes.kind === 'folder' && place.guid === parseOsfId(id).node && place.materialized.startsWith(materialized)) {
      throw badRequest(`'${before.title}' cannot be moved into itself.`);
    }
    const parentMaterialized = place ? place.materialized : materialized.replace(/[^/]+\/?$/, '');
    const sameNode = !place || place.guid === parseOsfId(id).node;
    // replacing a folder that holds the source would delete the source with it
    if (sameNode && materialized.startsWith(`${parentMaterialized}${title}/`)) {
      throw conflict(`'${title}' holds '${before.title}', so it cannot be replaced by it; choose another name.`);
    }
    const link = file.links?.move;
    if (!link) throw new FerryError(502, 'upstream_error', `OSF gave no move link for '${before.title}'.`);
    const body: Record<string, unknown> = place
      ? { action: 'move', path: place.path, resource: place.guid, provider: PROVIDER, ...(to.title !== undefined ? { rename: to.title } : {}) }
      : { action: 'rename', rename: title };
    body.conflict = to.overwrite ? 'replace' : 'warn';
    const response = await this.target.client.fileRequest(withoutQuery(link), {
      method: 'POST',
      token: ctx.token,
      signal: ctx.signal,
      json: body,
      allow: [409],
    });
    if (response.status === 409) {
      await response.body?.cancel();
      throw conflict(`'${title}' already exists in that OSF folder; choose another name, or send "overwrite": true to replace it.`);
    }
    const entity = ((await response.json()) as { data: WbEntity }).data;
    const after = this.nodeOf(entity, place?.containerId ?? before.container!, place?.guid ?? parseOsfId(id).node);
    // WaterButler answers 200 (not 201) when the name was taken and "replace" deleted what was there
    return { before, after, replaced: response.status === 200 ? { title, into: { kind: 'deleted' } } : null };
  }

  /** `PUT <new_folder link>?kind=folder&name=…` → 201; 409 when the name is taken (wb-mkdir.201.json). */
  async createFolder(ctx: TargetContext, containerId: string | null, title: string): Promise<ResourceNode> {
    if (containerId === null) throw badRequest("OSF's top level holds projects; make a folder inside a project, a storage or a folder.");
    const place = await this.place(ctx, containerId);
    const response = await this.target.client.fileRequest(`${place.newFolderUrl}?kind=folder&name=${strictEncode(title)}`, {
      method: 'PUT',
      token: ctx.token,
      signal: ctx.signal,
      allow: [409],
    });
    if (response.status === 409) {
      await response.body?.cancel();
      throw conflict(`'${title}' already exists in that OSF folder; choose another name.`);
    }
    return this.nodeOf(((await response.json()) as { data: WbEntity }).data, place.containerId, place.guid);
  }

  private async source(ctx: TargetContext, id: string, doing: string): Promise<{ file: JsonApiResource; node: ResourceNode }> {
    const ref = parseOsfId(id);
    if (ref.kind !== 'file') throw notSupported(`Ferry does not ${doing} OSF projects, components or storages; only files and folders in them.`);
    if (ref.provider !== PROVIDER) throw notSupported(`Ferry can ${doing} files only in OSF Storage (osfstorage), not in ${ref.provider}.`);
    const file = await this.target.fileRecord(ctx, ref.fileId, ref.node, ref.provider);
    const { kind, kind_name, id: fileId, container, title } = fileInfo(file, ref.node, ref.provider);
    return { file, node: { kind, kind_name, id: fileId, container, title } };
  }

  private async place(ctx: TargetContext, containerId: string | null): Promise<Place> {
    if (containerId === null) throw badRequest("OSF's top level holds projects; move into a project, a storage or a folder.");
    const ref = parseOsfId(containerId);
    if (ref.kind === 'node' || ref.kind === 'storage') {
      if (ref.kind === 'storage' && ref.provider !== PROVIDER) throw notSupported(`Ferry can put files only into OSF Storage (osfstorage), not ${ref.provider}.`);
      const provider = await this.target.provider(ctx, ref.node, PROVIDER);
      const link = provider.record.links?.new_folder ?? provider.record.links?.upload;
      if (!link) throw new FerryError(403, 'forbidden', "OSF offers no folder link for this project's storage; it may be read-only.");
      return { guid: ref.node, path: '/', containerId: storageId(ref.node, PROVIDER), materialized: '/', newFolderUrl: withoutQuery(link) };
    }
    if (ref.provider !== PROVIDER) throw notSupported(`Ferry can put files only into OSF Storage (osfstorage), not ${ref.provider}.`);
    const folder = await this.target.fileRecord(ctx, ref.fileId, ref.node, ref.provider);
    if (folder.attributes.kind !== 'folder') throw badRequest(`'${String(folder.attributes.name)}' is a file; that goes into a folder.`);
    const link = folder.links?.new_folder ?? folder.links?.upload ?? folder.links?.move;
    if (!link) throw new FerryError(502, 'upstream_error', `OSF gave no link for the folder '${String(folder.attributes.name)}'.`);
    return { guid: ref.node, path: String(folder.attributes.path), containerId, materialized: String(folder.attributes.materialized_path ?? ''), newFolderUrl: withoutQuery(link) };
  }

  /** A WaterButler answer as a Ferry node: in osfstorage the entity's path is its file id. */
  private nodeOf(entity: WbEntity, containerId: string, guid: string): ResourceNode {
    const folder = entity.attributes.kind === 'folder';
    const fileId = entity.attributes.path.replace(/^\//, '').replace(/\/$/, '');
    return {
      kind: folder ? 'container' : 'item',
      kind_name: folder ? 'folder' : 'file',
      id: fileNodeId(entity.attributes.resource ?? guid, PROVIDER, fileId),
      container: containerId,
      title: entity.attributes.name,
    };
  }
}
