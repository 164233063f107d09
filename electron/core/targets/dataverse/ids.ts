import { notFound } from '../../errors.js';

/**
 * Resource ids: a collection (a "dataverse") is `c<collection id>`, a dataset is `d<dataset id>`, a folder (a `directoryLabel` prefix)
 * `p<dataset id>_<base64url(path)>`, a file `f<dataset id>_<file id>`. Dataset and file ids
 * are Dataverse's numeric database ids, which every API path takes; a persistent id (a DOI
 * with '/' and '.') could not be an id. The dataset id is digits, so the first `_` ends it.
 * A replaced file gets a new file id in Dataverse, and so a new Ferry id.
 */
export type DataverseId =
  | { kind: 'collection'; collectionId: number }
  | { kind: 'dataset'; datasetId: number }
  | { kind: 'folder'; datasetId: number; path: string }
  | { kind: 'file'; datasetId: number; fileId: number };

export const collectionId = (id: number) => `c${id}`;
export const datasetId = (id: number) => `d${id}`;
export const folderId = (dataset: number, path: string) => `p${dataset}_${Buffer.from(path, 'utf8').toString('base64url')}`;
export const fileId = (dataset: number, file: number) => `f${dataset}_${file}`;

export function parseDataverseId(id: string): DataverseId {
  let match = /^c(\d+)$/.exec(id);
  if (match) return { kind: 'collection', collectionId: Number(match[1]) };
  match = /^d(\d+)$/.exec(id);
  if (match) return { kind: 'dataset', datasetId: Number(match[1]) };
  match = /^p(\d+)_([A-Za-z0-9_-]+)$/.exec(id);
  if (match) return { kind: 'folder', datasetId: Number(match[1]), path: Buffer.from(match[2] as string, 'base64url').toString('utf8') };
  match = /^f(\d+)_(\d+)$/.exec(id);
  if (match) return { kind: 'file', datasetId: Number(match[1]), fileId: Number(match[2]) };
  // ids are opaque: one this target could never have made names nothing (API.md: 404)
  throw notFound(`There is no Dataverse resource '${id}'; list the target's resources to find one.`);
}
