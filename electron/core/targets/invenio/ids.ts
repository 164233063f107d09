import { notFound } from '../../errors.js';

/**
 * Resource ids: a record (draft or published) is `r<record id>`, a file
 * `f<record id>_<base64url(key)>`. InvenioRDM record ids are lowercase letters, digits and
 * '-' ("abcde-12345"), never '_', so the first '_' ends the record id.
 */
export type InvenioId = { kind: 'record'; recordId: string } | { kind: 'file'; recordId: string; key: string };

export const recordId = (id: string) => `r${id}`;
export const fileId = (record: string, key: string) => `f${record}_${Buffer.from(key, 'utf8').toString('base64url')}`;

export function parseInvenioId(id: string): InvenioId {
  // `d<digits>`: a deposition id of Ferry's former legacy-API Zenodo target, kept so ids a
  // user saved still resolve; Zenodo's deposition id is its record id (zenodo-rdm legacy/)
  const record = /^r([a-z0-9-]+)$/.exec(id) ?? /^d(\d+)$/.exec(id);
  if (record) return { kind: 'record', recordId: record[1] as string };
  const file = /^f([a-z0-9-]+)_([A-Za-z0-9_-]+)$/.exec(id);
  if (file) return { kind: 'file', recordId: file[1] as string, key: Buffer.from(file[2] as string, 'base64url').toString('utf8') };
  throw notFound(`There is no InvenioRDM resource '${id}'; list the target's resources to find one.`);
}
