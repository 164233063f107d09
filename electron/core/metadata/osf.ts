import type { DescriptiveMetadata, Written } from './model.js';
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

/** What a new OSF project takes of the model when it is created (NodeSerializer: `description`, `tags`). */
export interface OsfNodeFields {
  description?: string;
  tags?: string[];
}

/**
 * The common model as a new OSF project's attributes (osf.io `api/nodes/serializers.py`
 * NodeSerializer: `description` and `tags` are writable on create; the title is the folder's).
 * The rest is named in notes, never guessed: OSF's contributors are OSF accounts added by
 * user id, not names; a licence is a relationship to one of OSF's licences with a year and
 * copyright holders; a node holds no related identifiers or funding.
 */
export function osfNodeFields(source: DescriptiveMetadata | undefined): Written<OsfNodeFields> {
  const fields: OsfNodeFields = {};
  const notes: string[] = [];
  if (!source) return { fields, notes };
  if (source.description) fields.description = source.description;
  if (source.keywords?.length) fields.tags = [...source.keywords];
  if (source.creators?.length) {
    notes.push(`OSF lists contributors as OSF accounts, so the creators (${source.creators.map((c) => c.name).join(', ')}) were not added; add them under the project's Contributors.`);
  }
  if (source.license) notes.push(`OSF asks a licence's year and copyright holders, so the licence '${source.license}' was not set; choose it in the project's Settings.`);
  const unheld = [source.related_identifiers?.length ? 'related identifiers' : null, source.funding?.length ? 'funding' : null, source.publication_date ? 'publication date' : null].filter(Boolean);
  if (unheld.length > 0) notes.push(`An OSF project holds no ${unheld.join(', ')}; the source's were not carried.`);
  return { fields, notes };
}

/** The id of the licence a node links, if any. */
export function licenseIdOf(node: JsonApiResource): string | null {
  return node.relationships?.license?.data?.id ?? null;
}

/** OSF returns titles and descriptions HTML-escaped (docs/targets: osf.md §5.6). */
function unescapeHtml(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|#39);/g, (_, name: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[name]!);
}
