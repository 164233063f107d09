import { notFound } from '../../errors.js';

/**
 * Ferry ids for OSF resources. OSF's own ids are a node guid (`vpnmr`), a storage
 * `<guid>:<provider>` and a 24-hex file id; Ferry's ids carry the node and provider too, so
 * a container chain can be rebuilt from an id alone, and use only [A-Za-z0-9_-] (no '.',
 * no ':'), so each is one safe path segment:
 *
 *   n-<guid>                      a project or component
 *   s-<guid>-<provider>           one storage provider of a node (osfstorage, github, ...)
 *   f-<guid>-<provider>-<fileid>  a file or folder inside that storage
 */
export type OsfRef =
  | { kind: 'node'; node: string }
  | { kind: 'storage'; node: string; provider: string }
  | { kind: 'file'; node: string; provider: string; fileId: string };

const PART = /^[A-Za-z0-9_]+$/;

export function nodeId(node: string): string {
  return `n-${checked(node)}`;
}

export function storageId(node: string, provider: string): string {
  return `s-${checked(node)}-${checked(provider)}`;
}

export function fileNodeId(node: string, provider: string, fileId: string): string {
  return `f-${checked(node)}-${checked(provider)}-${checked(fileId)}`;
}

export function parseOsfId(id: string): OsfRef {
  const parts = id.split('-');
  if (parts.every((part) => PART.test(part))) {
    if (parts[0] === 'n' && parts.length === 2) return { kind: 'node', node: parts[1]! };
    if (parts[0] === 's' && parts.length === 3) return { kind: 'storage', node: parts[1]!, provider: parts[2]! };
    if (parts[0] === 'f' && parts.length === 4) return { kind: 'file', node: parts[1]!, provider: parts[2]!, fileId: parts[3]! };
  }
  throw notFound(`No OSF resource has the id '${id.slice(0, 80)}'; OSF ids look like n-abc12, s-abc12-osfstorage or f-abc12-osfstorage-<24 hex>.`);
}

/** OSF parts are alphanumeric; anything else would make an ambiguous id. */
function checked(part: string): string {
  if (!PART.test(part)) throw new Error(`OSF returned an id part Ferry cannot encode: ${JSON.stringify(part).slice(0, 60)}`);
  return part;
}
