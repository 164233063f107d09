import type { EmuFileNode, EmuNode, EmuUser, OsfState } from './state.js';

/**
 * JSON:API bodies as OSF API v2 and WaterButler v1 write them (osf.md §1.6, §2.2), for the
 * requested API version: 2.0 by default; ≥2.1 moves paging meta to the top level and adds
 * links.self; ≥2.2 writes every date as `…%fZ`; the file `node` relationship exists only
 * up to 2.7.
 */
export interface Urls {
  api: string; // "http://127.0.0.1:p/v2/"
  files: string; // "http://127.0.0.1:q/"
  web: string; // "http://127.0.0.1:p/" (osf.io web host, download links)
}

export interface Version {
  text: string;
  minor: number;
}

export function formatOsfDate(date: Date | null, micros: number, version: Version, zone: 'none' | 'Z'): string | null {
  if (!date) return null;
  const base = date.toISOString().slice(0, 19);
  const fraction = String(micros).padStart(6, '0');
  if (version.minor >= 2 || zone === 'Z') return `${base}.${fraction}Z`;
  return micros === 0 ? base : `${base}.${fraction}`;
}

const related = (href: string, meta: Record<string, unknown> = {}) => ({ links: { related: { href, meta } } });

const withSelf = (href: string, selfHref: string) => ({ links: { self: { href: selfHref, meta: {} }, related: { href, meta: {} } } });

const NODE_RELATIONS = [
  'children', 'collected_in', 'comments', 'contributors', 'bibliographic_contributors', 'implicit_contributors', 'files', 'settings', 'wikis',
  'forks', 'node_links', 'linked_by_nodes', 'linked_by_registrations', 'identifiers', 'affiliated_institutions', 'draft_registrations',
  'registrations', 'region', 'root', 'logs', 'linked_nodes', 'linked_registrations', 'view_only_links', 'citation', 'preprints', 'storage',
  'cedar_metadata_records', 'subjects_acceptable',
] as const;

export function serializeNode(state: OsfState, node: EmuNode, userId: string | null, urls: Urls, version: Version) {
  const self = `${urls.api}nodes/${node.id}/`;
  const permission = state.permissionOf(userId, node);
  const permissions = permission === 'admin' ? ['admin', 'write', 'read'] : permission === 'write' ? ['write', 'read'] : permission === 'read' ? ['read'] : [];
  if (permissions.length === 0 && node.public && version.minor < 11) permissions.push('read');
  let root = node;
  while (root.parent) root = state.node(root.parent);
  const relationships: Record<string, unknown> = {};
  for (const name of NODE_RELATIONS) {
    if (name === 'comments') relationships.comments = related(`${self}comments/?filter%5Btarget%5D=${node.id}`);
    else if (name === 'settings') relationships.settings = { ...related(`${self}settings/`), data: { id: node.id, type: 'node-setting' } };
    else if (name === 'root') relationships.root = { ...related(`${urls.api}nodes/${root.id}/`), data: { id: root.id, type: 'nodes' } };
    else if (name === 'region') relationships.region = { ...related(`${urls.api}regions/us/`), data: { id: 'us', type: 'regions' } };
    else if (name === 'citation') relationships.citation = { ...related(`${self}citation/`), data: { id: node.id, type: 'citation' } };
    else if (name === 'storage') relationships.storage = { ...related(`${self}storage/`), data: { id: node.id, type: 'node-storage' } };
    else if (name === 'affiliated_institutions') relationships[name] = withSelf(`${self}institutions/`, `${self}relationships/institutions/`);
    else if (name === 'linked_nodes' || name === 'linked_registrations') relationships[name] = withSelf(`${self}${name}/`, `${self}relationships/${name}/`);
    else if (name === 'collected_in') relationships.collected_in = related(`${self}collections/`);
    else relationships[name] = related(`${self}${name}/`);
    // A top-level project has no `parent` key at all; a component's sits after `identifiers`.
    if (name === 'linked_by_registrations' && node.parent) {
      relationships.parent = { ...related(`${urls.api}nodes/${node.parent}/`), data: { id: node.parent, type: 'nodes' } };
    }
  }
  if (node.license) relationships.license = { ...related(`${urls.api}licenses/${node.license.id}/`), data: { id: node.license.id, type: 'licenses' } };
  return {
    id: node.id,
    type: 'nodes',
    attributes: {
      title: node.title,
      description: node.description,
      category: node.category,
      custom_citation: null,
      date_created: formatOsfDate(node.created, node.createdMicros, version, 'none'),
      date_modified: formatOsfDate(node.modified, node.modifiedMicros, version, 'none'),
      registration: false,
      preprint: false,
      fork: false,
      collection: false,
      tags: node.tags,
      access_requests_enabled: true,
      node_license: node.license ? { year: String(node.created.getUTCFullYear()), copyright_holders: [] } : null,
      current_user_can_comment: permission !== null,
      current_user_permissions: permissions,
      current_user_is_contributor: permission !== null,
      current_user_is_contributor_or_group_member: permission !== null,
      wiki_enabled: true,
      public: node.public,
      subjects: [],
    },
    relationships,
    links: { html: `${urls.web}${node.id}/`, self, iri: `${urls.web}${node.id}` },
  };
}

/** An entry of `GET /v2/nodes/<id>/files/`: a provider as a pseudo-folder. */
export function serializeProvider(node: EmuNode, provider: string, rootId: string, urls: Urls) {
  const wb = `${urls.files}v1/resources/${node.id}/providers/${provider}/`;
  return {
    id: `${node.id}:${provider}`,
    type: 'files',
    attributes: { kind: 'folder', name: provider, path: '/', node: node.id, provider },
    relationships: {
      files: related(`${urls.api}nodes/${node.id}/files/${provider}/`),
      root_folder: { ...related(`${urls.api}files/${rootId}/`), data: { id: rootId, type: 'files' } },
      target: { ...related(`${urls.api}nodes/${node.id}/`, { type: 'nodes' }), data: { type: 'nodes', id: node.id } },
    },
    links: {
      upload: wb,
      new_folder: `${wb}?kind=folder`,
      storage_addons: `${urls.api}addons/?filter%5Bcategories%5D=storage`,
    },
  };
}

/** A v2 `files` object (file or folder). */
export function serializeFile(state: OsfState, file: EmuFileNode, urls: Urls, version: Version) {
  const isFile = file.kind === 'file';
  const latest = file.versions.at(-1);
  const wbPath = isFile ? file.id : `${file.id}/`;
  const wb = `${urls.files}v1/resources/${file.nodeId}/providers/${file.provider}/${wbPath}`;
  const self = `${urls.api}files/${file.id}/`;
  const parentId = file.parentId;
  const relationships: Record<string, unknown> = {};
  if (parentId) relationships.parent_folder = { ...related(`${urls.api}files/${parentId}/`), data: { id: parentId, type: 'files' } };
  if (!isFile) relationships.files = related(`${urls.api}nodes/${file.nodeId}/files/${file.provider}/${file.id}/`);
  if (isFile) relationships.versions = related(`${self}versions/`);
  // `node` exists up to 2.7; the 2.20 recording shows an empty `comments` in its place.
  if (version.minor <= 7) relationships.node = { ...related(`${urls.api}nodes/${file.nodeId}/`), data: { id: file.nodeId, type: 'nodes' } };
  else relationships.comments = { data: null };
  relationships.target = { ...related(`${urls.api}nodes/${file.nodeId}/`, { type: 'nodes' }), data: { type: 'nodes', id: file.nodeId } };
  relationships.cedar_metadata_records = related(`${self}cedar_metadata_records/`);
  const links: Record<string, string> = { info: self, move: wb, upload: wb, delete: wb };
  if (isFile) {
    links.download = `${urls.web}download/${file.guid ?? file.id}/`;
    links.render = `${urls.web}render?url=${encodeURIComponent(`${urls.web}download/${file.id}/?direct&mode=render`)}`;
    links.html = `${urls.web}${file.nodeId}/files/${file.provider}/${file.id}`;
  } else {
    links.new_folder = `${wb}?kind=folder`;
  }
  links.self = self;
  return {
    id: file.id,
    type: 'files',
    attributes: {
      guid: file.guid,
      checkout: null,
      name: file.name,
      kind: file.kind,
      path: `/${wbPath}`,
      size: isFile ? (latest?.bytes.length ?? 0) : null,
      provider: file.provider,
      materialized_path: state.materializedPath(file),
      last_touched: null,
      date_modified: isFile && latest ? formatOsfDate(latest.modified, latest.modifiedMicros, version, 'none') : null,
      date_created: isFile ? formatOsfDate(file.created, file.createdMicros, version, 'Z') : null,
      extra: isFile ? { hashes: { md5: latest?.md5 ?? null, sha256: latest?.sha256 ?? null }, downloads: 0 } : { hashes: { md5: null, sha256: null } },
      tags: file.tags,
      current_user_can_comment: true,
      current_version: isFile ? file.versions.length : 1,
      show_as_unviewed: false,
    },
    relationships,
    links,
  };
}

export function serializeUser(user: EmuUser, urls: Urls) {
  return {
    id: user.id,
    type: 'users',
    attributes: {
      full_name: user.fullName, given_name: '', middle_names: '', family_name: '', suffix: '', active: true, timezone: 'Etc/UTC', locale: 'en_US',
      social: user.orcid ? { orcid: user.orcid } : {},
    },
    relationships: { nodes: related(`${urls.api}users/${user.id}/nodes/`) },
    links: { html: `${urls.web}${user.id}/`, self: `${urls.api}users/${user.id}/` },
  };
}

/** A WaterButler v1 entity (upload, mkdir and update answers). */
export function serializeWaterbutler(state: OsfState, file: EmuFileNode, urls: Urls) {
  const isFile = file.kind === 'file';
  const wbPath = isFile ? `/${file.id}` : `/${file.id}/`;
  const wb = `${urls.files}v1/resources/${file.nodeId}/providers/${file.provider}${wbPath}`;
  const latest = file.versions.at(-1);
  const modified = latest?.modified.toISOString().slice(0, 19);
  const attributes: Record<string, unknown> = isFile
    ? {
        extra: {
          guid: null, version: file.versions.length, downloads: 0, checkout: null, latestVersionSeen: null,
          hashes: { md5: latest?.md5 ?? null, sha256: latest?.sha256 ?? null },
        },
        kind: 'file', name: file.name, path: wbPath, provider: file.provider, materialized: state.materializedPath(file),
        etag: latest?.sha256 ?? null, contentType: 'application/octet-stream',
        modified: `${modified}.${String(latest?.modifiedMicros ?? 0).padStart(6, '0')}+00:00`, modified_utc: `${modified}+00:00`, created_utc: null,
        size: latest?.bytes.length ?? 0, sizeInt: latest?.bytes.length ?? 0, resource: file.nodeId,
      }
    : {
        extra: {}, kind: 'folder', name: file.name, path: wbPath, provider: file.provider, materialized: state.materializedPath(file),
        etag: file.id.padEnd(64, '0'), resource: file.nodeId, size: null, sizeInt: null,
      };
  const links: Record<string, string> = { move: wb, upload: `${wb}?kind=file`, delete: wb };
  if (isFile) links.download = wb;
  else links.new_folder = `${wb}?kind=folder`;
  return { id: `${file.provider}${wbPath}`, type: 'files', attributes, links };
}
