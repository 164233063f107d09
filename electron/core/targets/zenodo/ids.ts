import { notFound } from '../../errors.js';

/**
 * Resource ids: a deposition is `d<deposition id>`, a file `f<deposition id>_<base64url(key)>`.
 * The deposition id is digits, so the first `_` ends it even though base64url itself may
 * contain `_`. No id contains '.', so `<id>.json` splits unambiguously.
 */
export type ZenodoId = { kind: 'deposition'; depositionId: number } | { kind: 'file'; depositionId: number; key: string };

export const depositionId = (id: number | string) => `d${id}`;
export const fileId = (deposition: number | string, key: string) => `f${deposition}_${Buffer.from(key, 'utf8').toString('base64url')}`;

export function parseZenodoId(id: string): ZenodoId {
  const deposition = /^d(\d+)$/.exec(id);
  if (deposition) return { kind: 'deposition', depositionId: Number(deposition[1]) };
  const file = /^f(\d+)_([A-Za-z0-9_-]+)$/.exec(id);
  if (file) return { kind: 'file', depositionId: Number(file[1]), key: Buffer.from(file[2] as string, 'base64url').toString('utf8') };
  // Ids are opaque to clients: one this target could never have made names nothing, which
  // to a client is the same as one that names a deleted deposition (API.md: 404).
  throw notFound(`There is no Zenodo resource '${id}'; list the target's resources to find one.`);
}
