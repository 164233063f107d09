import type { DescriptiveMetadata } from './model.js';
import { spdxOf } from './licenses.js';
import type { JsonApiResource } from '../targets/osf/client.js';

type Creator = NonNullable<DescriptiveMetadata['creators']>[number];

/** A bibliographic contributor (users embedded) as a creator; null for a non-bibliographic one. */
export function creatorOf(contributor: JsonApiResource): Creator | null {
  if (contributor.attributes.bibliographic === false) return null;
  const user = (contributor as JsonApiResource & { embeds?: { users?: { data?: { attributes?: Record<string, unknown> } } } }).embeds?.users?.data?.attributes;
  const name = typeof user?.full_name === 'string' ? user.full_name.trim() : '';
  if (!name) return null;
  const social = user?.social as { orcid?: unknown } | undefined;
  const orcid = typeof social?.orcid === 'string' && social.orcid.trim() ? social.orcid.trim() : null;
  return { name, ...(orcid ? { orcid } : {}) };
}

// An OSF node's descriptive metadata in the common model (target.ts DescriptiveMetadata):
// title, description and tags from its attributes; creators from its bibliographic
// contributors (name, ORCID iD); the licence's name when the node links one (the caller
// reads /licenses/<id>/).

export function nodeMetadata(node: JsonApiResource, licenseName: string | null, creators: Creator[]): DescriptiveMetadata {
  const a = node.attributes;
  const metadata: DescriptiveMetadata = {};
  if (typeof a.title === 'string' && a.title) metadata.title = unescapeHtml(a.title);
  if (typeof a.description === 'string' && a.description) metadata.description = unescapeHtml(a.description);
  if (creators.length > 0) metadata.creators = creators;
  if (Array.isArray(a.tags) && a.tags.length > 0) metadata.keywords = a.tags.map(String);
  if (licenseName) metadata.license = spdxOf(licenseName);
  return metadata;
}

/** The id of the licence a node links, if any. */
export function licenseIdOf(node: JsonApiResource): string | null {
  return node.relationships?.license?.data?.id ?? null;
}

/** OSF returns titles and descriptions HTML-escaped (docs/targets: osf.md §5.6). */
function unescapeHtml(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|#39);/g, (_, name: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[name]!);
}
