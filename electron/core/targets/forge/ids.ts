import { notFound } from '../../errors.js';

/**
 * Resource ids for git forges: `<prefix><numeric id>` for a repository/project and
 * `<prefix><numeric id>-<base64url(path)>` below it. The numeric id survives renames; base64url
 * keeps any path (spaces, unicode, dots, "%") inside one URL segment with no '.'.
 */
export interface ForgeId {
  repoId: number;
  /** '' for the repository itself */
  path: string;
}

export function encodeForgeId(prefix: string, repoId: number, path = ''): string {
  return path ? `${prefix}${repoId}-${Buffer.from(path, 'utf8').toString('base64url')}` : `${prefix}${repoId}`;
}

export function decodeForgeId(prefix: string, id: string, service: string): ForgeId {
  const match = new RegExp(`^${prefix}(\\d+)(?:-([A-Za-z0-9_-]+))?$`).exec(id);
  if (!match) throw notFound(`"${id}" is not a ${service} resource id.`);
  const path = match[2] ? Buffer.from(match[2], 'base64url').toString('utf8') : '';
  if (match[2] && (Buffer.from(path, 'utf8').toString('base64url') !== match[2] || path.split('/').some((s) => s === '' || s === '.' || s === '..'))) {
    throw notFound(`"${id}" is not a ${service} resource id.`);
  }
  return { repoId: Number(match[1]), path };
}
