// The metadata review before a new top-level upload or transfer into a repository (#21): what
// the new record will be described with, read from the source's detail where it says it.
// The core carries the source's descriptive metadata itself (WriteOptions.metadata); the
// review shows it so nothing reaches a repository unseen. Sending edits needs the metadata
// contract another change adds (see submitMetadata in api/client.ts).
import type { ResourceDetail } from '../../shared/api.js';

/**
 * Targets whose top-level writes keep the carried metadata: the core's
 * `TargetInfo.keepsMetadata` (Zenodo; InvenioRDM on main). The API does not expose that flag
 * yet, so the renderer's copy lives here and only here; a target missing from it is not
 * reviewed, which is safe (the job then notes that its metadata was not kept). Offering the
 * review where the core drops the metadata would show edits that go nowhere.
 */
const REPOSITORIES: ReadonlySet<string> = new Set(['zenodo', 'invenio']);

export const keepsMetadata = (target: string | null): boolean => target !== null && REPOSITORIES.has(target);

/** The reviewed fields, as a person edits them: creators one per line, keywords comma-separated. */
export interface ReviewedMetadata {
  title: string;
  description: string;
  creators: string;
  keywords: string;
  license: string;
}

const text = (value: unknown): string => (typeof value === 'string' ? value : '');

const listOf = (value: unknown, join: string): string =>
  Array.isArray(value)
    ? value
        .map((entry) => (typeof entry === 'string' ? entry : typeof entry === 'object' && entry && 'name' in entry ? text((entry as { name: unknown }).name) : ''))
        .filter(Boolean)
        .join(join)
    : text(value);

/** What the source's detail says of itself; a field it does not carry stays empty (never guessed). */
export function metadataFromDetail(detail: Pick<ResourceDetail, 'title' | 'extra'> | null, fallbackTitle: string): ReviewedMetadata {
  const extra = detail?.extra ?? {};
  return {
    title: detail?.title ?? fallbackTitle,
    description: text(extra.description),
    creators: listOf(extra.creators ?? extra.authors, '\n'),
    keywords: listOf(extra.keywords ?? extra.tags, ', '),
    license: typeof extra.license === 'object' && extra.license ? text((extra.license as { name?: unknown }).name ?? (extra.license as { id?: unknown }).id) : text(extra.license),
  };
}

export function sameMetadata(a: ReviewedMetadata, b: ReviewedMetadata): boolean {
  return (Object.keys(a) as (keyof ReviewedMetadata)[]).every((key) => a[key].trim() === b[key].trim());
}
