import { createHash, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import yauzl from 'yauzl';
import { closeServers, listenOnLoopback, readBody, sendJson } from '../shared/http.js';
import { parseMultipart } from './multipart.js';
import { matchesQueryString } from '../shared/query-string.js';

/**
 * A loopback model of one Dataverse installation (IQSS/dataverse, read at commit b485249,
 * July 2026) and of the S3 store its direct uploads go to, built from
 * docs/targets/dataverse.md; each quirk names its source. What it models:
 * - the envelope `{"status":"OK","data":…}` / `{"status":"ERROR","message":…}`; a bad
 *   X-Dataverse-key is 401 "Bad API key" (api/auth/ApiKeyAuthMechanism.java);
 * - `GET /api/mydata/retrieve` (mydata/DataRetrieverAPI.java): HTTP 200 even for its own
 *   errors (`success:false`, `error_message`), 10 cards a page whatever `per_page` says,
 *   `role_ids` required, and "no results" as success (6.11+) or, with `legacyNoResults`,
 *   as `success:false` (before 6.11, doc/release-notes/6.11-release-notes.md);
 * - `GET /api/datasets/{id}/versions/:latest` (the draft when the token may edit it);
 * - `POST /api/datasets/{id}/add`: multipart `file` + `jsonData`; a ZIP is unpacked
 *   (CreateNewDataFilesCommand.java), a CSV is ingested to `.tab` keeping the original's
 *   checksum (ingest/IngestServiceBean.java; admin/troubleshooting.rst) and locks the dataset
 *   for a while (`Ingest` lock); a taken name gets `-1` (IngestUtil.generateNewFileName);
 *   duplicate content is only a warning (AddReplaceFileHelper.step_040);
 * - `POST /api/files/{id}/replace`: a new file id, `previousDataFileId`; identical content
 *   refused; a different content type refused without `forceReplace`;
 * - direct upload (developers/s3-direct-upload-api.rst): `uploadurls` (404 when the store
 *   does not allow it), presigned single PUT (needs `x-amz-tagging: dv-state=temp` and a
 *   Content-Length) or parts + `PUT /api/datasets/mpupload` with the ETags, `addFiles` with
 *   per-file results inside an HTTP 200; storage takes PUTs side by side (`storagePuts` counts
 *   them), a dataset one change at a time (an overlapping add, replace or addFiles is a 500
 *   OptimisticLockException, IQSS/dataverse#11265; `changes`);
 * - `GET /api/dataverses/{id}/contents` (Dataverses.java `listContent`): the direct
 *   sub-collections `{type:"dataverse", id, title}` and datasets (JsonPrinter `json(Dataset)`:
 *   ids and persistent id parts, **no title**) the user may see (released, or with a role);
 * - `GET /api/access/datafile/{id}` (`format=original` for the uploaded bytes of an
 *   ingested file), `GET /api/users/:me`, `POST /api/dataverses/{alias}/datasets` (400
 *   "Validation Failed: …" for missing required fields), `GET /api/datasets/{id}/locks`.
 * Ferry never publishes, so publishing is only a fixture (`addDataset(..., {released})`).
 * With `storageDir`, storage keeps parts and direct-uploaded objects as files there, streamed
 * (a GiB upload without a GiB in memory); a file registered from one is a `disk` file.
 */
export type ChecksumType = 'MD5' | 'SHA-1' | 'SHA-256' | 'SHA-512';

export interface DvFile {
  id: number;
  label: string;
  directoryLabel: string | null;
  restricted: boolean;
  contentType: string;
  /** the stored bytes (the `.tab` of an ingested file); empty for a `disk` file */
  bytes: Buffer;
  /** a direct-uploaded object kept on disk (`storageDir`) */
  disk?: DiskObject;
  /** set for an ingested tabular file: what was uploaded */
  original: { bytes: Buffer; name: string; format: string } | null;
  checksum: { type: ChecksumType; value: string };
  storageIdentifier: string;
  rootDataFileId: number;
  previousDataFileId: number | null;
  created: string;
}

/** An object or part storage keeps as a file (`storageDir`). */
export interface DiskObject {
  path: string;
  size: number;
  md5: string;
}

export interface DvDataset {
  id: number;
  persistentId: string;
  dataverse: string;
  title: string;
  /** users with a role on it */
  members: Set<number>;
  released: { versionNumber: number; files: DvFile[]; releaseTime: string } | null;
  draft: { files: DvFile[]; createTime: string; lastUpdateTime: string } | null;
  /** lock reads left before the Ingest lock lifts */
  ingestLockReads: number;
  /** My Data searches left before the index shows it */
  hiddenSearches: number;
  /** the citation block's fields as created, besides the title; unset: only the title */
  citation?: DvCitationField[];
  /** the version's licence; unset: the installation's default (CC0 1.0) */
  license?: { name: string; uri: string };
}

export interface DvCitationField {
  typeName: string;
  multiple: boolean;
  typeClass: string;
  value: unknown;
}

/**
 * GET /api/licenses (Dataverse 5.10+): CC0 1.0 ships as the default; installations add
 * more from scripts/api/data/licenses (here CC BY 4.0, as most do).
 */
export const DATAVERSE_LICENSES = [
  { id: 1, name: 'CC0 1.0', shortDescription: 'Creative Commons CC0 1.0 Universal Public Domain Dedication.', uri: 'http://creativecommons.org/publicdomain/zero/1.0', iconUrl: 'https://licensebuttons.net/p/zero/1.0/88x31.png', active: true, isDefault: true, sortOrder: 0 },
  { id: 2, name: 'CC BY 4.0', shortDescription: 'Creative Commons Attribution 4.0 International License.', uri: 'http://creativecommons.org/licenses/by/4.0', iconUrl: 'https://licensebuttons.net/l/by/4.0/88x31.png', active: true, isDefault: false, sortOrder: 2 },
];

/**
 * The citation block's fields the emulator knows (citation.tsv), each with its type class and
 * children, and the controlled vocabularies Ferry writes. JsonParser refuses an unknown type
 * ("Can't find type '<name>'") and a value outside a vocabulary ("Value '<v>' does not exist
 * in type '<name>'").
 */
const CITATION_TYPES: Record<string, { typeClass: string; multiple: boolean; children?: string[] }> = {
  title: { typeClass: 'primitive', multiple: false },
  author: { typeClass: 'compound', multiple: true, children: ['authorName', 'authorAffiliation', 'authorIdentifierScheme', 'authorIdentifier'] },
  datasetContact: { typeClass: 'compound', multiple: true, children: ['datasetContactName', 'datasetContactAffiliation', 'datasetContactEmail'] },
  dsDescription: { typeClass: 'compound', multiple: true, children: ['dsDescriptionValue', 'dsDescriptionDate'] },
  subject: { typeClass: 'controlledVocabulary', multiple: true },
  keyword: { typeClass: 'compound', multiple: true, children: ['keywordValue', 'keywordVocabulary', 'keywordVocabularyURI'] },
  publication: { typeClass: 'compound', multiple: true, children: ['publicationCitation', 'publicationIDType', 'publicationIDNumber', 'publicationURL'] },
  grantNumber: { typeClass: 'compound', multiple: true, children: ['grantNumberAgency', 'grantNumberValue'] },
  productionDate: { typeClass: 'primitive', multiple: false },
};
const VOCABULARIES: Record<string, string[]> = {
  subject: ['Agricultural Sciences', 'Arts and Humanities', 'Astronomy and Astrophysics', 'Business and Management', 'Chemistry', 'Computer and Information Science', 'Earth and Environmental Sciences', 'Engineering', 'Law', 'Mathematical Sciences', 'Medicine, Health and Life Sciences', 'Physics', 'Social Sciences', 'Other'],
  authorIdentifierScheme: ['ORCID', 'ISNI', 'LCNA', 'VIAF', 'GND', 'DAI', 'ResearcherID', 'ScopusID'],
  publicationIDType: ['ark', 'arXiv', 'bibcode', 'cstr', 'doi', 'ean13', 'eissn', 'handle', 'isbn', 'issn', 'istc', 'lissn', 'lsid', 'pmid', 'purl', 'upc', 'url', 'urn', 'DASH-NRS'],
};

/** Why JsonParser would refuse these citation fields, or null. */
function citationProblem(fields: DvCitationField[]): string | null {
  const check = (field: DvCitationField, allowed: Record<string, { typeClass: string; multiple: boolean }>): string | null => {
    const type = allowed[field.typeName] ?? (VOCABULARIES[field.typeName] ? { typeClass: 'controlledVocabulary', multiple: field.multiple } : field.typeName in CHILD_NAMES ? { typeClass: 'primitive', multiple: false } : null);
    if (!type) return `Can't find type '${field.typeName}'`;
    if (field.typeClass !== type.typeClass || field.multiple !== type.multiple) return `incorrect typeClass or multiple for '${field.typeName}'`;
    const values = field.multiple ? (Array.isArray(field.value) ? field.value : null) : [field.value];
    if (!values) return `Invalid values submitted for ${field.typeName}. It should be an array of values.`;
    for (const value of values) {
      if (field.typeClass === 'compound') {
        const parent = CITATION_TYPES[field.typeName]!;
        for (const [childName, child] of Object.entries(value as Record<string, DvCitationField>)) {
          if (!parent.children!.includes(childName) || child.typeName !== childName) return `Can't find type '${childName}'`;
          const problem = check(child, {});
          if (problem) return problem;
        }
      } else if (field.typeClass === 'controlledVocabulary') {
        if (!VOCABULARIES[field.typeName]!.includes(String(value))) return `Value '${String(value)}' does not exist in type '${field.typeName}'`;
      } else if (typeof value !== 'string') return `Invalid value for ${field.typeName}`;
    }
    return null;
  };
  for (const field of fields) {
    const problem = check(field, CITATION_TYPES);
    if (problem) return problem;
  }
  return null;
}
const CHILD_NAMES = Object.fromEntries(Object.values(CITATION_TYPES).flatMap((t) => t.children ?? []).map((name) => [name, true]));

/** A collection (a "dataverse"): `root` always exists and takes anyone's datasets. */
export interface DvCollection {
  id: number;
  alias: string;
  name: string;
  /** alias of the parent collection; null for root */
  parent: string | null;
  /** users with a role on it */
  members: Set<number>;
  created: string;
}

export interface DvUser {
  id: number;
  identifier: string;
  firstName: string;
  lastName: string;
  email: string;
}

export interface DataverseEmulatorOptions {
  checksumType?: ChecksumType;
  /** the store allows direct upload (S3) */
  directUpload?: boolean;
  /** direct upload part size (Dataverse: the store's setting, ≥ 5 MiB on AWS) */
  partSize?: number;
  /** citation fields required beyond the standard ones (an installation's own rules) */
  extraRequiredFields?: string[];
  /** "no results" answered the pre-6.11 way */
  legacyNoResults?: boolean;
  /** lock reads an ingest takes */
  ingestLockReads?: number;
  /** how long storage takes over each part, ms (to stop a client mid-upload) */
  s3DelayMs?: number;
  /** storage keeps parts and objects as files in this folder (made if missing) */
  storageDir?: string;
  /** My Data searches a new dataset stays out of (Solr indexes it asynchronously) */
  indexLagSearches?: number;
}

export interface RecordedRequest {
  server: 'api' | 's3';
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** for multipart adds: the jsonData text */
  jsonData?: string;
  /** a JSON request body, as sent */
  json?: string;
  /** for multipart adds: the `file` part's filename */
  filename?: string;
}

export interface DataverseState {
  users: Map<string, DvUser>;
  datasets: Map<number, DvDataset>;
  collections: Map<string, DvCollection>;
  options: Required<Omit<DataverseEmulatorOptions, 'storageDir'>>;
  requests: RecordedRequest[];
  /** multipart uploads in progress: uploadId → parts */
  uploads: Map<string, { key: string; parts: Map<number, Buffer | DiskObject> }>;
  /** objects in the S3 bucket, by storage key */
  objects: Map<string, Buffer | DiskObject>;
  /**
   * Storage PUTs under way now, and the most at once so far. S3 takes PUTs to presigned URLs
   * side by side (Dataverse's upload page and dvwebloader keep 4 files under way, DVUploader
   * 4 parts); nothing in the dataset changes until addFiles.
   */
  storagePuts: { now: number; most: number };
  /**
   * Changes of a dataset (add, replace, addFiles) under way now, by dataset id, and the most at
   * once so far. One that arrives while another of the same dataset is under way fails as
   * Dataverse's do: 500 OptimisticLockException (IQSS/dataverse#11265).
   */
  changes: { now: Map<number, number>; most: number };
  /** a PUT of this many bytes storage refuses as expired (S3: 403 AccessDenied, "Request has expired"); null: none */
  expiredPutSize: number | null;
  addDataset(owner: number, title: string, files?: Record<string, string | Buffer>, options?: { released?: boolean; dataverse?: string }): DvDataset;
  addCollection(owner: number, alias: string, name: string, parent?: string): DvCollection;
  /** the files of a dataset's latest version */
  latest(dataset: DvDataset): DvFile[];
}

export interface DataverseEmulator {
  url: string;
  s3Url: string;
  state: DataverseState;
  close(): Promise<void>;
}

const now = () => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
const ALGORITHM: Record<ChecksumType, string> = { MD5: 'md5', 'SHA-1': 'sha1', 'SHA-256': 'sha256', 'SHA-512': 'sha512' };
const digest = (type: ChecksumType, bytes: Buffer) => createHash(ALGORITHM[type]).update(bytes).digest('hex');
const ok = (res: ServerResponse, data: unknown, extra: Record<string, unknown> = {}, status = 200) => sendJson(res, status, { status: 'OK', ...extra, data });
const fail = (res: ServerResponse, status: number, message: string) => sendJson(res, status, { status: 'ERROR', message });

export async function startDataverseEmulator(options: DataverseEmulatorOptions = {}): Promise<DataverseEmulator> {
  let nextId = 100;
  const state: DataverseState = {
    users: new Map([
      ['dv-token-1111', { id: 1, identifier: 'jdoe', firstName: 'Jane', lastName: 'Doe', email: 'jane@example.org' }],
      ['dv-token-2222', { id: 2, identifier: 'other', firstName: 'Oscar', lastName: 'Other', email: 'oscar@example.org' }],
    ]),
    datasets: new Map(),
    collections: new Map([['root', { id: 1, alias: 'root', name: 'Root', parent: null, members: new Set<number>(), created: now() }]]),
    options: {
      checksumType: options.checksumType ?? 'MD5',
      directUpload: options.directUpload ?? false,
      partSize: options.partSize ?? 5 * 1024 * 1024,
      extraRequiredFields: options.extraRequiredFields ?? [],
      legacyNoResults: options.legacyNoResults ?? false,
      ingestLockReads: options.ingestLockReads ?? 0,
      s3DelayMs: options.s3DelayMs ?? 0,
      indexLagSearches: options.indexLagSearches ?? 0,
    },
    requests: [],
    storagePuts: { now: 0, most: 0 },
    changes: { now: new Map(), most: 0 },
    expiredPutSize: null,
    uploads: new Map(),
    objects: new Map(),
    addDataset(owner, title, files = {}, { released = false, dataverse = 'root' } = {}) {
      const id = nextId++;
      const time = now();
      const dataset: DvDataset = {
        id,
        persistentId: `doi:10.5072/FK2/${id.toString(36).toUpperCase().padStart(6, 'X')}`,
        dataverse,
        title,
        members: new Set([owner]),
        released: null,
        draft: { files: [], createTime: time, lastUpdateTime: time },
        ingestLockReads: 0,
        hiddenSearches: 0,
      };
      for (const [path, content] of Object.entries(files)) {
        const bytes = Buffer.isBuffer(content) ? content : Buffer.from(content);
        const slash = path.lastIndexOf('/');
        dataset.draft!.files.push(makeFile(slash === -1 ? path : path.slice(slash + 1), slash === -1 ? null : path.slice(0, slash), bytes, 'application/octet-stream'));
      }
      if (released) {
        dataset.released = { versionNumber: 1, files: dataset.draft!.files, releaseTime: time };
        dataset.draft = null;
      }
      state.datasets.set(id, dataset);
      return dataset;
    },
    latest: (dataset) => dataset.draft?.files ?? dataset.released?.files ?? [],
    addCollection(owner, alias, name, parent = 'root') {
      const collection: DvCollection = { id: nextId++, alias, name, parent, members: new Set([owner]), created: now() };
      state.collections.set(alias, collection);
      return collection;
    },
  };

  function makeFile(label: string, directoryLabel: string | null, bytes: Buffer, contentType: string, checksum?: DvFile['checksum']): DvFile {
    const id = nextId++;
    return {
      id,
      label,
      directoryLabel,
      restricted: false,
      contentType,
      bytes,
      original: null,
      checksum: checksum ?? { type: state.options.checksumType, value: digest(state.options.checksumType, bytes) },
      storageIdentifier: `local://${randomUUID()}`,
      rootDataFileId: id,
      previousDataFileId: null,
      created: now().slice(0, 10),
    };
  }

  let base = '';
  let s3Base = '';

  const api = http.createServer((req, res) => {
    handleApi(req, res).catch((error: unknown) => fail(res, 500, `emulator error: ${String(error)}`));
  });
  const s3 = http.createServer((req, res) => {
    handleS3(req, res).catch((error: unknown) => {
      res.statusCode = 500;
      res.end(String(error));
    });
  });

  async function handleApi(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', base);
    const method = req.method ?? 'GET';
    const record: RecordedRequest = { server: 'api', method, path: `${url.pathname}${url.search}`, headers: { ...req.headers } };
    state.requests.push(record);
    // from its arrival to its answer: a change of a dataset while another is under way fails
    const changed = method === 'POST' ? changedDataset(url.pathname) : null;
    if (changed !== null) {
      const under = (state.changes.now.get(changed) ?? 0) + 1;
      state.changes.now.set(changed, under);
      state.changes.most = Math.max(state.changes.most, under);
      res.once('close', () => state.changes.now.set(changed, (state.changes.now.get(changed) ?? 1) - 1));
      if (under > 1) {
        await readBody(req);
        return fail(res, 500, `Exception Description: The object [[DatasetVersion id:${changed}]] cannot be merged because it has changed or been deleted since it was last read. Class> edu.harvard.iq.dataverse.DatasetVersion (OptimisticLockException)`);
      }
    }
    const body = await readBody(req);
    if (/application\/json/i.test(req.headers['content-type'] ?? '')) record.json = body.toString('utf8');
    const key = req.headers['x-dataverse-key'];
    const user = typeof key === 'string' ? state.users.get(key) : undefined;
    // ApiKeyAuthMechanism: a key that matches no user is 401 "Bad API key" on every @AuthRequired endpoint
    if (typeof key === 'string' && !user) return fail(res, 401, 'Bad API key');
    const path = url.pathname.replace(/\/+$/, '');
    let match: RegExpExecArray | null;

    if (path === '/api/info/version' && method === 'GET') return ok(res, { version: '6.8', build: 'emulator' });
    if (!user) return fail(res, 401, 'User not found for the given API key.');

    if (path === '/api/licenses' && method === 'GET') return ok(res, DATAVERSE_LICENSES);
    if (path === '/api/users/:me' && method === 'GET') {
      return ok(res, { id: user.id, identifier: `@${user.identifier}`, displayName: `${user.firstName} ${user.lastName}`, firstName: user.firstName, lastName: user.lastName, email: user.email, superuser: false, deactivated: false, affiliation: 'Emulator' });
    }

    if (path === '/api/mydata/retrieve' && method === 'GET') return myData(url, user, res);

    if ((match = /^\/api\/dataverses\/([^/]+)$/.exec(path)) && method === 'GET') {
      const key = decodeURIComponent(match[1] as string);
      const collection = state.collections.get(key === ':root' ? 'root' : key) ?? [...state.collections.values()].find((c) => String(c.id) === key);
      if (!collection) return fail(res, 404, `Can't find dataverse with identifier='${key}'`);
      const parent = collection.parent ? state.collections.get(collection.parent) : undefined;
      return ok(res, { id: collection.id, alias: collection.alias, name: collection.name, affiliation: 'Emulator', dataverseContacts: [{ displayOrder: 0, contactEmail: 'root@example.org' }], permissionRoot: true, description: `${collection.name} description`, dataverseType: 'UNCATEGORIZED', ...(parent ? { ownerId: parent.id } : {}), creationDate: collection.created, isReleased: false, effectiveRequiresFilesToPublishDataset: false, isMetadataBlockRoot: false, isFacetRoot: false });
    }

    if ((match = /^\/api\/dataverses\/([^/]+)\/contents$/.exec(path)) && method === 'GET') {
      const key = decodeURIComponent(match[1] as string);
      const collection = state.collections.get(key === ':root' ? 'root' : key) ?? [...state.collections.values()].find((c) => String(c.id) === key);
      if (!collection) return fail(res, 404, `Can't find dataverse with identifier='${key}'`);
      const children = [...state.collections.values()].filter((c) => c.parent === collection.alias).map((c) => ({ type: 'dataverse', id: c.id, title: c.name }));
      const datasets = [...state.datasets.values()]
        .filter((d) => d.dataverse === collection.alias && (d.released || d.members.has(user.id)))
        .map((d) => {
          const [authority, identifier] = d.persistentId.slice(4).split(/\/(.*)/s) as [string, string];
          return { id: d.id, identifier, persistentUrl: `https://doi.org/${d.persistentId.slice(4)}`, protocol: 'doi', authority, separator: '/', publisher: 'Emulator', ...(d.released ? { publicationDate: d.released.releaseTime.slice(0, 10) } : {}), storageIdentifier: `s3://emulator-bucket:${d.persistentId.slice(4)}`, datasetType: 'dataset', type: 'dataset' };
        });
      return ok(res, [...children, ...datasets]);
    }

    if ((match = /^\/api\/dataverses\/([^/]+)\/datasets$/.exec(path)) && method === 'POST') {
      if (!/application\/json/i.test(req.headers['content-type'] ?? '')) return fail(res, 415, 'Unsupported Media Type');
      return createDataset(decodeURIComponent(match[1] as string), body, user, res);
    }

    if ((match = /^\/api\/datasets\/(\d+)\/versions\/(:latest|:draft|:latest-published)$/.exec(path)) && method === 'GET') {
      const dataset = visible(Number(match[1]), user, res);
      if (!dataset) return;
      const which = match[2];
      const draft = which !== ':latest-published' && dataset.draft;
      if (which === ':draft' && !dataset.draft) return fail(res, 404, `Dataset version ${which} of dataset ${dataset.id} not found`);
      if (!draft && !dataset.released) return fail(res, 404, `Dataset version ${which} of dataset ${dataset.id} not found`);
      return ok(res, versionJson(dataset, draft ? 'draft' : 'released', url.searchParams.get('excludeFiles') === 'true', url.searchParams.get('returnOwners') === 'true'));
    }

    if ((match = /^\/api\/datasets\/(\d+)\/versions\/:draft$/.exec(path)) && method === 'DELETE') {
      // Native API "Delete Dataset Draft" (Datasets.java deleteDraftVersion; the R `dataverse`
      // client's delete_dataset uses it): the draft goes; a dataset never published goes whole
      const dataset = visible(Number(match[1]), user, res);
      if (!dataset) return;
      if (!dataset.draft) return fail(res, 404, `Dataset version :draft of dataset ${dataset.id} not found`);
      if (dataset.released) dataset.draft = null;
      else state.datasets.delete(dataset.id);
      return ok(res, { message: `Draft version of dataset ${dataset.id} deleted` });
    }

    if ((match = /^\/api\/datasets\/(\d+)\/locks$/.exec(path)) && method === 'GET') {
      const dataset = visible(Number(match[1]), user, res);
      if (!dataset) return;
      const locks = dataset.ingestLockReads > 0 ? [{ lockType: 'Ingest', date: now(), user: user.identifier, dataset: dataset.persistentId, message: 'Ingest in progress' }] : [];
      if (dataset.ingestLockReads > 0) dataset.ingestLockReads--;
      return ok(res, locks);
    }

    if ((match = /^\/api\/datasets\/(\d+)\/add$/.exec(path)) && method === 'POST') {
      const dataset = editable(Number(match[1]), user, res);
      if (!dataset) return;
      return addFile(req, body, dataset, record, res);
    }

    if ((match = /^\/api\/datasets\/(\d+)\/addFiles$/.exec(path)) && method === 'POST') {
      const dataset = editable(Number(match[1]), user, res);
      if (!dataset) return;
      return addFiles(req, body, dataset, record, res);
    }

    if ((match = /^\/api\/datasets\/(\d+)\/uploadurls$/.exec(path)) && method === 'GET') {
      const dataset = visible(Number(match[1]), user, res);
      if (!dataset) return;
      if (!dataset.members.has(user.id)) return fail(res, 403, 'You are not permitted to upload files to this dataset.');
      if (!state.options.directUpload) return fail(res, 404, `Direct upload not supported for files in this dataset: ${dataset.id}`);
      return uploadUrls(dataset, Number(url.searchParams.get('size')), res);
    }

    if (path === '/api/datasets/mpupload' && (method === 'PUT' || method === 'DELETE')) {
      const uploadId = url.searchParams.get('uploadid') ?? '';
      const upload = state.uploads.get(uploadId);
      if (!upload) return fail(res, 400, 'Could not complete upload: no such multipart upload.');
      state.uploads.delete(uploadId);
      if (method === 'DELETE') return ok(res, { message: 'Multipart upload aborted' });
      const etags = JSON.parse(body.toString('utf8')) as Record<string, string>;
      const numbers = Object.keys(etags).map(Number).sort((a, b) => a - b);
      const pieces: (Buffer | DiskObject)[] = [];
      for (const n of numbers) {
        const part = upload.parts.get(n);
        // S3 CompleteMultipartUpload: InvalidPart when an ETag does not match the stored part
        if (!part || `"${md5Of(part)}"` !== etags[String(n)]) return fail(res, 400, `Could not complete upload: part ${n} is missing or its ETag differs.`);
        pieces.push(part);
      }
      state.objects.set(upload.key, await joined(pieces));
      return ok(res, { message: 'Multipart Upload completed' });
    }

    if ((match = /^\/api\/files\/(\d+)\/replace$/.exec(path)) && method === 'POST') return replaceFile(Number(match[1]), req, body, user, record, res);

    if ((match = /^\/api\/access\/datafile\/(\d+)$/.exec(path)) && method === 'GET') {
      const found = findFile(Number(match[1]));
      if (!found) return fail(res, 404, `Datafile ${match[1]}: not found`);
      if (!found.dataset.members.has(user.id) && !state.latest(found.dataset).includes(found.file)) return fail(res, 403, 'Not authorized to access this object via this API endpoint. Please check your code for typos, or consult our API guide at http://guides.dataverse.org.');
      const original = url.searchParams.get('format') === 'original' && found.file.original;
      const bytes = original ? original.bytes : found.file.bytes;
      res.statusCode = 200;
      res.setHeader('content-type', original ? original.format : found.file.contentType);
      res.setHeader('content-length', String(original ? bytes.length : sizeOf(found.file)));
      res.setHeader('content-disposition', `attachment; filename*=UTF-8''${encodeURIComponent(original ? original.name : found.file.label)}`);
      if (!original && found.file.disk) return pipeline(createReadStream(found.file.disk.path), res);
      return void res.end(bytes);
    }

    return fail(res, 404, `API endpoint does not exist on this server. Please check your code for typos, or consult our API guide at http://guides.dataverse.org.`);
  }

  function myData(url: URL, user: DvUser, res: ServerResponse): void {
    const roles = url.searchParams.getAll('role_ids');
    // MyDataFilterParams: no role → an error, answered with HTTP 200 (DataRetrieverAPI)
    if (roles.length === 0) return sendJson(res, 200, { success: false, error_message: 'No results. Please select at least one Role.' });
    const types = url.searchParams.getAll('dvobject_types');
    const states = url.searchParams.getAll('published_states');
    // `mydata_search_term` is the Solr query of the My Data search (DataRetrieverAPI →
    // MyDataFilterParams.getSearchTerm → SolrSearchServiceBean.search), blank meaning `*:*`;
    // Solr runs it with edismax over title, description, names… (conf/solr/solrconfig.xml
    // `qf`), terms OR'ed: shared/query-string.ts
    const term = url.searchParams.get('mydata_search_term')?.trim() || '*';
    const collections = [...state.collections.values()].filter(
      (c) => c.members.has(user.id) && (types.length === 0 || types.includes('Dataverse')) && matchesQueryString(term, [c.name, `${c.name} description`]),
    );
    // IndexServiceBean.asyncIndexDataset: a new dataset reaches Solr, and My Data, a moment later
    for (const d of state.datasets.values()) if (d.hiddenSearches > 0 && d.members.has(user.id)) d.hiddenSearches--;
    const wanted = [...state.datasets.values()]
      .filter((d) => d.members.has(user.id) && d.hiddenSearches === 0 && matchesQueryString(term, [d.title, `${d.title} description`]))
      .filter(() => types.length === 0 || types.includes('Dataset'))
      .filter((d) => states.length === 0 || (d.draft && !d.released ? states.includes('Unpublished') || states.includes('Draft') : d.draft ? states.includes('Draft') || states.includes('Published') : states.includes('Published')))
      .sort((a, b) => b.id - a.id);
    const total = collections.length + wanted.length;
    if (total === 0) {
      if (state.options.legacyNoResults) return sendJson(res, 200, { success: false, error_message: 'Sorry, you have no results.' });
      return sendJson(res, 200, { success: true, message: 'Sorry, no results were found.', data: { pagination: pager(0, 1), items: [], total_count: 0, start: 0 } });
    }
    // SearchConstants.NUM_SOLR_DOCS_TO_RETRIEVE: 10 a page; `per_page` is documented but not read
    const page = Math.max(1, Number(url.searchParams.get('selected_page') ?? 1) || 1);
    const collectionCards = collections.map((c) => {
      const parent = c.parent ? state.collections.get(c.parent) : undefined;
      return {
        name: c.name,
        type: 'dataverse',
        url: `${base}/dataverse/${c.alias}`,
        identifier: c.alias,
        description: `${c.name} description`,
        published_at: c.created,
        entity_id: c.id,
        publicationStatuses: ['Unpublished'],
        is_draft_state: false,
        is_in_review_state: false,
        is_unpublished_state: true,
        is_published: false,
        is_deaccesioned: false,
        is_valid: true,
        date_to_display_on_card: c.created.slice(0, 10),
        // SolrSearchResult.getJsonForMyData: a collection's and a dataset's parent is a collection, by id
        ...(parent ? { parentId: String(parent.id), parentName: parent.name } : {}),
        user_roles: ['Admin'],
      };
    });
    const datasetCards = wanted.map((d) => {
      const draft = Boolean(d.draft);
      const parent = state.collections.get(d.dataverse);
      return {
        name: d.title,
        type: 'dataset',
        url: `${base}/dataset.xhtml?persistentId=${d.persistentId}`,
        global_id: d.persistentId,
        description: `${d.title} description`,
        published_at: d.released?.releaseTime,
        publisher: d.dataverse,
        citationHtml: `Doe, Jane, ${d.title}, <a href="https://doi.org/${d.persistentId.slice(4)}">${d.persistentId}</a>`,
        identifier_of_dataverse: d.dataverse,
        name_of_dataverse: state.collections.get(d.dataverse)?.name ?? d.dataverse,
        citation: `Doe, Jane, ${d.title}, ${d.persistentId}`,
        storageIdentifier: `file://${d.persistentId.slice(4)}`,
        fileCount: state.latest(d).length,
        versionId: d.id * 10,
        versionState: draft ? 'DRAFT' : 'RELEASED',
        majorVersion: d.released?.versionNumber,
        minorVersion: d.released ? 0 : undefined,
        createdAt: d.draft?.createTime ?? d.released?.releaseTime,
        updatedAt: d.draft?.lastUpdateTime ?? d.released?.releaseTime,
        is_draft_state: draft,
        is_in_review_state: false,
        is_unpublished_state: !d.released,
        is_published: Boolean(d.released) && !draft,
        is_deaccesioned: false,
        date_to_display_on_card: (d.draft?.createTime ?? d.released?.releaseTime ?? '').slice(0, 10),
        ...(parent ? { parentId: String(parent.id), parentName: parent.name } : {}),
        entity_id: d.id,
        publicationStatuses: draft ? (d.released ? ['Draft'] : ['Unpublished', 'Draft']) : ['Published'],
        user_roles: ['Contributor'],
      };
    });
    const items = [...collectionCards, ...datasetCards].slice((page - 1) * 10, page * 10);
    sendJson(res, 200, { success: true, data: { pagination: pager(total, page), items, total_count: total, start: (page - 1) * 10, search_term: term, dvobject_counts: { dataverses_count: collectionCards.length, datasets_count: datasetCards.length }, pubstatus_counts: {}, selected_filters: { role_names: ['Contributor'], publication_statuses: states } } });
  }

  function pager(total: number, page: number): Record<string, unknown> {
    const pageCount = Math.max(1, Math.ceil(total / 10));
    return { isNecessary: total > 10, numResults: total, numResultsString: String(total), docsPerPage: 10, selectedPageNumber: page, pageCount, hasPreviousPageNumber: page > 1, previousPageNumber: Math.max(1, page - 1), hasNextPageNumber: page < pageCount, nextPageNumber: Math.min(pageCount, page + 1) };
  }

  function createDataset(alias: string, body: Buffer, user: DvUser, res: ServerResponse): void {
    const collection = state.collections.get(alias === ':root' ? 'root' : alias) ?? [...state.collections.values()].find((c) => String(c.id) === alias);
    if (!collection) return fail(res, 404, `Can't find dataverse with identifier='${alias}'`);
    // root takes anyone's datasets (as on Harvard Dataverse); elsewhere a role is needed
    if (collection.alias !== 'root' && !collection.members.has(user.id)) return fail(res, 403, `User @${user.identifier} is not permitted to perform requested action.`);
    const json = JSON.parse(body.toString('utf8')) as { datasetVersion?: { license?: { name?: string; uri?: string }; metadataBlocks?: { citation?: { fields?: DvCitationField[] } } } };
    if (!json.datasetVersion) return fail(res, 400, 'Please provide initial version in the dataset json');
    const fields = json.datasetVersion.metadataBlocks?.citation?.fields ?? [];
    const has = (name: string) => fields.some((field) => field.typeName === name && JSON.stringify(field.value ?? '').replace(/"/g, '').trim() !== '');
    // DatasetVersion validation → "Validation Failed: <Field> is required." per missing field
    const labels: Record<string, string> = { title: 'Title', author: 'Author', datasetContact: 'Point of Contact', dsDescription: 'Description', subject: 'Subject', keyword: 'Keyword', productionDate: 'Production Date' };
    const missing = ['title', 'author', 'datasetContact', 'dsDescription', 'subject', ...state.options.extraRequiredFields].filter((name) => !has(name));
    if (missing.length) return fail(res, 400, `Validation Failed: ${missing.map((name) => `${labels[name] ?? name} is required. (Invalid value:edu.harvard.iq.dataverse.DatasetField[ id=null ])`).join(', ')}.`);
    const problem = citationProblem(fields);
    if (problem) return fail(res, 400, `Error parsing Json: ${problem}`);
    const wantedLicense = json.datasetVersion.license;
    const license = wantedLicense ? DATAVERSE_LICENSES.find((l) => l.active && (l.uri === wantedLicense.uri || l.name === wantedLicense.name)) : undefined;
    if (wantedLicense && !license) return fail(res, 400, `Error parsing Json: Invalid license: ${wantedLicense.uri ?? wantedLicense.name}`);
    const title = String(fields.find((field) => field.typeName === 'title')?.value ?? '');
    const dataset = state.addDataset(user.id, title, {}, { dataverse: collection.alias });
    dataset.citation = fields.filter((field) => field.typeName !== 'title');
    if (license) dataset.license = { name: license.name, uri: license.uri };
    dataset.hiddenSearches = state.options.indexLagSearches + 1;
    ok(res, { id: dataset.id, persistentId: dataset.persistentId }, {}, 201);
  }

  function visible(id: number, user: DvUser, res: ServerResponse): DvDataset | null {
    const dataset = state.datasets.get(id);
    if (!dataset || (!dataset.members.has(user.id) && !dataset.released)) {
      fail(res, 404, `Dataset with ID ${id} not found.`);
      return null;
    }
    return dataset;
  }

  function editable(id: number, user: DvUser, res: ServerResponse): DvDataset | null {
    const dataset = visible(id, user, res);
    if (!dataset) return null;
    if (!dataset.members.has(user.id)) {
      fail(res, 403, 'You do not have permission to edit this dataset.');
      return null;
    }
    // an ingest in progress locks the dataset (Bundle: dataset.message.locked.editNotAllowed)
    if (dataset.ingestLockReads > 0) {
      fail(res, 409, 'Dataset cannot be edited due to dataset lock.');
      return null;
    }
    return dataset;
  }

  /** The draft, made from the released version when there is none (Dataverse does this on the first edit). */
  function draftOf(dataset: DvDataset): DvFile[] {
    if (!dataset.draft) {
      const time = now();
      dataset.draft = { files: [...(dataset.released?.files ?? [])], createTime: time, lastUpdateTime: time };
    }
    dataset.draft.lastUpdateTime = now();
    return dataset.draft.files;
  }

  /** IngestUtil.generateNewFileName: a taken label within the same folder becomes name-1.ext, name-2.ext … */
  function freeLabel(files: DvFile[], label: string, directoryLabel: string | null): string {
    const taken = (name: string) => files.some((f) => f.label === name && (f.directoryLabel ?? null) === directoryLabel);
    let candidate = label;
    const dot = label.lastIndexOf('.');
    const stem = dot > 0 ? label.slice(0, dot) : label;
    const ext = dot > 0 ? label.slice(dot) : '';
    for (let n = 1; taken(candidate); n++) candidate = `${stem}-${n}${ext}`;
    return candidate;
  }

  interface Incoming {
    name: string;
    directoryLabel: string | null;
    bytes: Buffer;
    contentType: string;
    checksum?: DvFile['checksum'];
    /** a direct-uploaded object on disk (then `bytes` is empty and `checksum` given) */
    disk?: DiskObject;
  }

  /** A direct-uploaded object as an upload: on disk as it is, else its bytes. */
  function fromObject(object: Buffer | DiskObject): Pick<Incoming, 'bytes' | 'disk'> {
    return Buffer.isBuffer(object) ? { bytes: object } : { bytes: Buffer.alloc(0), disk: object };
  }

  /** Native upload: a ZIP becomes its members, a CSV is ingested; everything else as sent. */
  async function expand(upload: Incoming): Promise<Incoming[]> {
    const isZip = upload.bytes.subarray(0, 4).equals(Buffer.from([0x50, 0x4b, 0x03, 0x04])) && (/\.zip$/i.test(upload.name) || upload.contentType === 'application/zip');
    if (!isZip) return [upload];
    // CreateNewDataFilesCommand: members unpacked, folders from their paths, __MACOSX-style "._" and .DS_Store skipped
    const members = await unzip(upload.bytes);
    return members
      .filter((member) => !member.path.endsWith('/'))
      .filter((member) => !/(^|\/)(\._[^/]*|\.DS_Store[^/]*)$/.test(member.path))
      .map((member) => {
        const slash = member.path.lastIndexOf('/');
        return { name: member.path.slice(slash + 1), directoryLabel: slash === -1 ? upload.directoryLabel : member.path.slice(0, slash), bytes: member.bytes, contentType: /\.zip$/i.test(member.path) ? 'application/zip' : 'application/octet-stream' };
      });
  }

  function store(dataset: DvDataset, upload: Incoming, previous: DvFile | null): { file: DvFile; warning: string | null } {
    const files = draftOf(dataset);
    const others = previous ? files.filter((f) => f !== previous) : files;
    const duplicate = others.find((f) => f.checksum.value === (upload.checksum?.value ?? digest(state.options.checksumType, upload.bytes)));
    const label = freeLabel(others, upload.name, upload.directoryLabel);
    const file = makeFile(label, upload.directoryLabel, upload.bytes, upload.contentType, upload.checksum);
    if (upload.disk) file.disk = upload.disk;
    // tabular ingest: CSV → tab-separated `.tab`; the checksum stays the original's
    if (/\.csv$/i.test(upload.name) && !upload.disk) {
      file.original = { bytes: upload.bytes, name: upload.name, format: 'text/csv' };
      file.bytes = Buffer.from(upload.bytes.toString('utf8').replace(/,/g, '\t'));
      file.label = freeLabel(others, upload.name.replace(/\.csv$/i, '.tab'), upload.directoryLabel);
      file.contentType = 'text/tab-separated-values';
      dataset.ingestLockReads = state.options.ingestLockReads;
    }
    if (previous) {
      file.rootDataFileId = previous.rootDataFileId;
      file.previousDataFileId = previous.id;
      files.splice(files.indexOf(previous), 1, file);
    } else {
      files.push(file);
    }
    return { file, warning: duplicate ? `This file has the same content as ${file.label} that is in the dataset. ` : null };
  }

  async function addFile(req: IncomingMessage, body: Buffer, dataset: DvDataset, record: RecordedRequest, res: ServerResponse): Promise<void> {
    const parts = parseMultipart(req, body);
    if (!parts) return fail(res, 400, 'Expected multipart/form-data.');
    const jsonText = parts.find((p) => p.name === 'jsonData')?.body.toString('utf8') ?? '{}';
    record.jsonData = jsonText;
    const json = JSON.parse(jsonText) as { directoryLabel?: string; storageIdentifier?: string; label?: string };
    const filePart = parts.find((p) => p.name === 'file');
    record.filename = filePart?.filename ?? undefined;
    if (!filePart || filePart.filename === null) return fail(res, 400, 'You must upload a file or provide a valid storageidentifier, filename, and mimetype.');
    const unpacked = await expand({ name: filePart.filename, directoryLabel: json.directoryLabel || null, bytes: filePart.body, contentType: filePart.contentType ?? 'application/octet-stream' });
    // OptionalFileParams.addOptionalParams: `label` and `directoryLabel` are set on every file made
    const expanded = unpacked.map((file) => ({ ...file, ...(json.label ? { name: json.label } : {}), ...(json.directoryLabel ? { directoryLabel: json.directoryLabel } : {}) }));
    const stored = expanded.map((upload) => store(dataset, upload, null));
    const warning = stored.find((s) => s.warning)?.warning;
    ok(res, { files: stored.map((s) => fileMetadataJson(s.file, dataset)) }, warning ? { message: { message: warning } } : {});
  }

  async function addFiles(req: IncomingMessage, body: Buffer, dataset: DvDataset, record: RecordedRequest, res: ServerResponse): Promise<void> {
    const parts = parseMultipart(req, body);
    const jsonText = parts?.find((p) => p.name === 'jsonData')?.body.toString('utf8') ?? '[]';
    record.jsonData = jsonText;
    const list = JSON.parse(jsonText) as { storageIdentifier?: string; fileName?: string; mimeType?: string; directoryLabel?: string; checksum?: { '@type': ChecksumType; '@value': string }; md5Hash?: string }[];
    const results: unknown[] = [];
    let added = 0;
    for (const item of list) {
      const key = item.storageIdentifier?.replace(/^s3:\/\/[^:]+:/, '') ?? '';
      const object = state.objects.get(`${dataset.persistentId.slice(4)}/${key}`);
      if (!item.storageIdentifier || !item.fileName || !item.mimeType) {
        results.push({ errorMessage: 'You must provide a storageidentifier, filename, and mimetype.', fileDetails: item });
        continue;
      }
      if (!object) {
        results.push({ storageIdentifier: item.storageIdentifier, errorMessage: 'BAD_REQUEST:Dataset store configuration does not allow provided storageIdentifier.', fileDetails: item });
        continue;
      }
      // the checksum is taken as given, not checked (s3-direct-upload-api.rst)
      const checksum = item.checksum ? { type: item.checksum['@type'], value: item.checksum['@value'] } : { type: 'MD5' as const, value: item.md5Hash ?? '' };
      const { file, warning } = store(dataset, { name: item.fileName, directoryLabel: item.directoryLabel || null, ...fromObject(object), contentType: item.mimeType, checksum }, null);
      file.storageIdentifier = item.storageIdentifier;
      added++;
      results.push({ storageIdentifier: item.storageIdentifier, ...(warning ? { warningMessage: warning } : { successMessage: 'Added successfully to the dataset' }), fileDetails: fileMetadataJson(file, dataset) });
    }
    // per-file failures inside an HTTP 200 (AddReplaceFileHelper.addFiles)
    ok(res, { Files: results, Result: { 'Total number of files': list.length, 'Number of files successfully added': added } });
  }

  async function replaceFile(id: number, req: IncomingMessage, body: Buffer, user: DvUser, record: RecordedRequest, res: ServerResponse): Promise<void> {
    const found = findFile(id);
    if (!found) return fail(res, 400, `Replacement file not found. There was no file found for ID: ${id}`);
    const dataset = editable(found.dataset.id, user, res);
    if (!dataset) return;
    const current = draftOf(dataset).find((f) => f.id === id);
    if (!current) return fail(res, 400, 'You cannot replace a file that is not in the most recently published dataset. (The file is unpublished or was deleted from a previous version.)');
    const parts = parseMultipart(req, body);
    if (!parts) return fail(res, 400, 'Expected multipart/form-data.');
    const jsonText = parts.find((p) => p.name === 'jsonData')?.body.toString('utf8') ?? '{}';
    record.jsonData = jsonText;
    const json = JSON.parse(jsonText) as { forceReplace?: boolean | string; directoryLabel?: string; label?: string; storageIdentifier?: string; fileName?: string; mimeType?: string; checksum?: { '@type': ChecksumType; '@value': string } };
    let incoming: Incoming;
    if (json.storageIdentifier) {
      const object = state.objects.get(`${dataset.persistentId.slice(4)}/${json.storageIdentifier.replace(/^s3:\/\/[^:]+:/, '')}`);
      if (!object) return fail(res, 400, 'Dataset store configuration does not allow provided storageIdentifier.');
      incoming = { name: json.fileName ?? current.label, directoryLabel: json.directoryLabel ?? current.directoryLabel, ...fromObject(object), contentType: json.mimeType ?? 'application/octet-stream', checksum: json.checksum ? { type: json.checksum['@type'], value: json.checksum['@value'] } : undefined };
    } else {
      const filePart = parts.find((p) => p.name === 'file');
      record.filename = filePart?.filename ?? undefined;
      if (!filePart || filePart.filename === null) return fail(res, 400, 'You must upload a file or provide a valid storageidentifier, filename, and mimetype.');
      incoming = { name: json.label || filePart.filename, directoryLabel: json.directoryLabel ?? current.directoryLabel, bytes: filePart.body, contentType: filePart.contentType ?? 'application/octet-stream' };
    }
    const value = incoming.checksum?.value ?? digest(state.options.checksumType, incoming.bytes);
    if (value === current.checksum.value) return fail(res, 400, 'Error! You may not replace a file with a file that has duplicate content.');
    const force = json.forceReplace === true || json.forceReplace === 'true';
    if (!force && incoming.contentType !== current.contentType) return fail(res, 400, `The original file (${current.contentType}) and replacement file (${incoming.contentType}) are different file types.`);
    const { file } = store(dataset, incoming, current);
    ok(res, { files: [fileMetadataJson(file, dataset)] }, { message: 'Replacement succeeded' });
  }

  function uploadUrls(dataset: DvDataset, size: number, res: ServerResponse): void {
    const key = `${Date.now().toString(16)}-${randomUUID().slice(0, 12)}`;
    const storageIdentifier = `s3://emulator-bucket:${key}`;
    const object = `${dataset.persistentId.slice(4)}/${key}`;
    const signed = `X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=3600&X-Amz-Signature=${randomUUID().replace(/-/g, '')}`;
    if (size <= state.options.partSize) {
      return ok(res, { url: `${s3Base}/emulator-bucket/${object}?X-Amz-SignedHeaders=host%3Bx-amz-tagging&${signed}`, partSize: state.options.partSize, storageIdentifier });
    }
    const uploadId = randomUUID();
    state.uploads.set(uploadId, { key: object, parts: new Map() });
    const urls: Record<string, string> = {};
    for (let n = 1; n <= Math.ceil(size / state.options.partSize); n++) urls[String(n)] = `${s3Base}/emulator-bucket/${object}?partNumber=${n}&uploadId=${uploadId}&${signed}`;
    const query = `globalid=${encodeURIComponent(dataset.persistentId)}&uploadid=${uploadId}&storageidentifier=${encodeURIComponent(storageIdentifier)}`;
    ok(res, { urls, abort: `/api/datasets/mpupload?${query}`, complete: `/api/datasets/mpupload?${query}`, partSize: state.options.partSize, storageIdentifier });
  }

  /** The dataset an add, replace or addFiles changes, or null for any other request. */
  function changedDataset(pathname: string): number | null {
    const add = /^\/api\/datasets\/(\d+)\/(add|addFiles)\/?$/.exec(pathname);
    if (add) return Number(add[1]);
    const replace = /^\/api\/files\/(\d+)\/replace\/?$/.exec(pathname);
    return replace ? (findFile(Number(replace[1]))?.dataset.id ?? null) : null;
  }

  async function handleS3(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', s3Base);
    state.requests.push({ server: 's3', method: req.method ?? 'GET', path: `${url.pathname}${url.search}`, headers: { ...req.headers } });
    if (req.method === 'PUT') {
      state.storagePuts.now++;
      state.storagePuts.most = Math.max(state.storagePuts.most, state.storagePuts.now);
      res.once('close', () => state.storagePuts.now--);
    }
    const body = await received(req);
    if (state.options.s3DelayMs) await new Promise((resolve) => setTimeout(resolve, state.options.s3DelayMs));
    const xml = (status: number, code: string, message: string) => {
      res.statusCode = status;
      res.setHeader('content-type', 'application/xml');
      res.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${message}</Message></Error>`);
    };
    if (req.method !== 'PUT') return xml(405, 'MethodNotAllowed', 'The specified method is not allowed against this resource.');
    // s3-direct-upload-api.rst: without Content-Length S3 answers 501 NotImplemented
    if (req.headers['content-length'] === undefined) return xml(501, 'NotImplemented', 'A header you provided implies functionality that is not implemented (Transfer-Encoding).');
    // a presigned URL past its expiry (the store's url-expiration-minutes, S3AccessIO)
    if (Number(req.headers['content-length']) === state.expiredPutSize) return xml(403, 'AccessDenied', 'Request has expired');
    const object = decodeURIComponent(url.pathname.replace(/^\/emulator-bucket\//, ''));
    const uploadId = url.searchParams.get('uploadId');
    if (uploadId) {
      const upload = state.uploads.get(uploadId);
      if (!upload) return xml(404, 'NoSuchUpload', 'The specified upload does not exist.');
      upload.parts.set(Number(url.searchParams.get('partNumber')), body);
    } else {
      // the single-part URL is signed with x-amz-tagging (S3 tagging on by default)
      if (req.headers['x-amz-tagging'] !== 'dv-state=temp') return xml(403, 'SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided.');
      state.objects.set(object, body);
    }
    res.statusCode = 200;
    res.setHeader('etag', `"${md5Of(body)}"`);
    res.end();
  }

  /** A PUT's body: to a file of its own with `storageDir`, else in memory. */
  async function received(req: IncomingMessage): Promise<Buffer | DiskObject> {
    if (!options.storageDir) return readBody(req);
    await mkdir(options.storageDir, { recursive: true });
    const file = path.join(options.storageDir, randomUUID());
    const hash = createHash('md5');
    let size = 0;
    const counting = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        hash.update(chunk);
        size += chunk.length;
        done(null, chunk);
      },
    });
    await pipeline(req, counting, createWriteStream(file));
    return { path: file, size, md5: hash.digest('hex') };
  }

  /** The parts of a completed multipart upload as one object (S3 CompleteMultipartUpload). */
  async function joined(pieces: (Buffer | DiskObject)[]): Promise<Buffer | DiskObject> {
    if (pieces.every((piece) => Buffer.isBuffer(piece))) return Buffer.concat(pieces);
    const file = path.join(options.storageDir!, randomUUID());
    const hash = createHash('md5');
    let size = 0;
    const out = createWriteStream(file);
    for (const piece of pieces) {
      const source = Buffer.isBuffer(piece) ? [piece] : createReadStream(piece.path);
      for await (const chunk of source as AsyncIterable<Buffer>) {
        hash.update(chunk);
        size += chunk.length;
        if (!out.write(chunk)) await once(out, 'drain');
      }
      if (!Buffer.isBuffer(piece)) await rm(piece.path, { force: true });
    }
    await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
    return { path: file, size, md5: hash.digest('hex') };
  }

  function findFile(id: number): { dataset: DvDataset; file: DvFile } | null {
    for (const dataset of state.datasets.values()) {
      for (const file of [...(dataset.draft?.files ?? []), ...(dataset.released?.files ?? [])]) if (file.id === id) return { dataset, file };
    }
    return null;
  }

  function dataFileJson(file: DvFile, dataset: DvDataset): Record<string, unknown> {
    return {
      id: file.id,
      persistentId: '',
      filename: file.label,
      contentType: file.contentType,
      friendlyType: file.contentType,
      filesize: sizeOf(file),
      storageIdentifier: file.storageIdentifier,
      ...(file.original ? { originalFileFormat: file.original.format, originalFormatLabel: 'Comma Separated Values', originalFileSize: file.original.bytes.length, originalFileName: file.original.name, UNF: 'UNF:6:emulator==' } : {}),
      rootDataFileId: file.rootDataFileId === file.id ? -1 : file.rootDataFileId,
      ...(file.previousDataFileId ? { previousDataFileId: file.previousDataFileId } : {}),
      // JsonPrinter: `md5` only when the installation's algorithm is MD5; `checksum` always
      ...(file.checksum.type === 'MD5' ? { md5: file.checksum.value } : {}),
      checksum: { type: file.checksum.type, value: file.checksum.value },
      tabularData: Boolean(file.original),
      creationDate: file.created,
      ...(file.directoryLabel ? { directoryLabel: file.directoryLabel } : {}),
      lastUpdateTime: dataset.draft?.lastUpdateTime ?? dataset.released?.releaseTime,
      fileAccessRequest: false,
    };
  }

  function fileMetadataJson(file: DvFile, dataset: DvDataset): Record<string, unknown> & { dataFile: Record<string, unknown> } {
    return { label: file.label, restricted: file.restricted, ...(file.directoryLabel ? { directoryLabel: file.directoryLabel } : {}), version: 1, datasetVersionId: dataset.id * 10, dataFile: dataFileJson(file, dataset) };
  }

  /** JsonPrinter.getOwnersFromDvObject: the direct parent outermost, its own parents nested in `isPartOf` */
  function ownersOf(alias: string | null): Record<string, unknown> | undefined {
    const collection = alias ? state.collections.get(alias) : undefined;
    if (!collection) return undefined;
    const parent = ownersOf(collection.parent);
    return { type: 'DATAVERSE', identifier: collection.alias, isReleased: false, displayName: collection.name, ...(parent ? { isPartOf: parent } : {}) };
  }

  function versionJson(dataset: DvDataset, which: 'draft' | 'released', excludeFiles: boolean, returnOwners = false): Record<string, unknown> {
    const draft = which === 'draft';
    const files = draft ? dataset.draft!.files : dataset.released!.files;
    return {
      id: dataset.id * 10 + (draft ? 1 : 0),
      datasetId: dataset.id,
      datasetPersistentId: dataset.persistentId,
      datasetType: 'dataset',
      storageIdentifier: `s3://emulator-bucket:${dataset.persistentId.slice(4)}`,
      ...(draft ? {} : { versionNumber: dataset.released!.versionNumber, versionMinorNumber: 0 }),
      versionState: draft ? 'DRAFT' : 'RELEASED',
      latestVersionPublishingState: dataset.draft ? 'DRAFT' : 'RELEASED',
      lastUpdateTime: draft ? dataset.draft!.lastUpdateTime : dataset.released!.releaseTime,
      ...(draft ? {} : { releaseTime: dataset.released!.releaseTime }),
      createTime: draft ? dataset.draft!.createTime : dataset.released!.releaseTime,
      license: dataset.license ?? { name: 'CC0 1.0', uri: 'http://creativecommons.org/publicdomain/zero/1.0' },
      fileAccessRequest: true,
      metadataBlocks: { citation: { displayName: 'Citation Metadata', name: 'citation', fields: [{ typeName: 'title', multiple: false, typeClass: 'primitive', value: dataset.title }, ...(dataset.citation ?? [])] } },
      ...(returnOwners ? { isPartOf: ownersOf(dataset.dataverse) } : {}),
      ...(excludeFiles ? {} : { files: files.map((file) => fileMetadataJson(file, dataset)) }),
    };
  }

  base = await listenOnLoopback(api);
  s3Base = await listenOnLoopback(s3);
  return { url: base, s3Url: s3Base, state, close: () => closeServers(api, s3) };
}

const md5 = (bytes: Buffer) => createHash('md5').update(bytes).digest('hex');
const md5Of = (object: Buffer | DiskObject) => (Buffer.isBuffer(object) ? md5(object) : object.md5);
const sizeOf = (file: DvFile) => file.disk?.size ?? file.bytes.length;

function unzip(bytes: Buffer): Promise<{ path: string; bytes: Buffer }[]> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(bytes, { lazyEntries: true }, (error, zip) => {
      if (error || !zip) return reject(error ?? new Error('not a zip'));
      const out: { path: string; bytes: Buffer }[] = [];
      zip.on('entry', (entry: yauzl.Entry) => {
        zip.openReadStream(entry, (streamError, stream) => {
          if (streamError || !stream) return reject(streamError ?? new Error('unreadable member'));
          const chunks: Buffer[] = [];
          stream.on('data', (chunk: Buffer) => chunks.push(chunk));
          stream.on('end', () => {
            out.push({ path: entry.fileName, bytes: Buffer.concat(chunks) });
            zip.readEntry();
          });
        });
      });
      zip.on('end', () => resolve(out));
      zip.on('error', reject);
      zip.readEntry();
    });
  });
}
