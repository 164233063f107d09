import { notFound } from '../../errors.js';

/**
 * Resource ids: a community is `c<community UUID>`, a record (draft or published) is `r<record id>`, a file
 * `f<record id>_<base64url(key)>`. InvenioRDM record ids are lowercase letters, digits and
 * '-' ("abcde-12345"), never '_', so the first '_' ends the record id.
 */
export type InvenioId = { kind: 'community'; communityId: string } | { kind: 'record'; recordId: string } | { kind: 'file'; recordId: string; key: string };

export const communityId = (id: string) => `c${id}`;
export const recordId = (id: string) => `r${id}`;
export const fileId = (record: string, key: string) => `f${record}_${Buffer.from(key, 'utf8').toString('base64url')}`;

export function parseInvenioId(id: string): InvenioId {
  const community = /^c([0-9a-f-]+)$/.exec(id);
  if (community) return { kind: 'community', communityId: community[1] as string };
  // `d<digits>`: a deposition id of Ferry's former legacy-API Zenodo target, kept so ids a
  // user saved still resolve; Zenodo's deposition id is its record id (zenodo-rdm legacy/)
  const record = /^r([a-z0-9-]+)$/.exec(id) ?? /^d(\d+)$/.exec(id);
  if (record) return { kind: 'record', recordId: record[1] as string };
  const file = /^f([a-z0-9-]+)_([A-Za-z0-9_-]+)$/.exec(id);
  if (file) return { kind: 'file', recordId: file[1] as string, key: Buffer.from(file[2] as string, 'base64url').toString('utf8') };
  throw notFound(`There is no InvenioRDM resource '${id}'; list the target's resources to find one.`);
}
