import type { DescriptiveMetadata } from '../../target.js';
import type { JsonApiResource } from './client.js';

// An OSF node's descriptive metadata in the common model (target.ts DescriptiveMetadata):
// title, description and tags from its attributes; the licence's name when the node links
// one (the caller reads /licenses/<id>/). Contributors are not read yet (docs/provenance.md).

export function nodeMetadata(node: JsonApiResource, licenseName: string | null): DescriptiveMetadata {
  const a = node.attributes;
  const metadata: DescriptiveMetadata = {};
  if (typeof a.title === 'string' && a.title) metadata.title = unescapeHtml(a.title);
  if (typeof a.description === 'string' && a.description) metadata.description = unescapeHtml(a.description);
  if (Array.isArray(a.tags) && a.tags.length > 0) metadata.keywords = a.tags.map(String);
  if (licenseName) metadata.license = licenseName;
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
