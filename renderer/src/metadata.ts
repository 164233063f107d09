// The metadata review before a new top-level record in a repository (#21): the source's
// descriptive metadata as GET …/resources/<id>/metadata/ answers it, shown as editable text,
// and the reviewed copy sent back as the transfer's `metadata` (docs/api.md "Descriptive
// metadata"). Which destinations keep it is theirs to say (`keeps_metadata`, read by the
// session store): the renderer keeps no list of its own.
import type { DescriptiveMetadata } from '../../shared/api.js';

/** The reviewed fields, as a person edits them: creators one per line, keywords comma-separated. */
export interface ReviewedMetadata {
  title: string;
  description: string;
  creators: string;
  keywords: string;
  license: string;
  publication_date: string;
}

/** The form's text of what the source says; a field it does not say stays empty (never guessed). */
export function reviewOf(metadata: DescriptiveMetadata, fallbackTitle: string): ReviewedMetadata {
  return {
    title: metadata.title ?? fallbackTitle,
    description: metadata.description ?? '',
    creators: (metadata.creators ?? []).map((creator) => creator.name).join('\n'),
    keywords: (metadata.keywords ?? []).join(', '),
    license: metadata.license ?? '',
    publication_date: metadata.publication_date ?? '',
  };
}

const lines = (text: string, separator: RegExp): string[] =>
  text
    .split(separator)
    .map((part) => part.trim())
    .filter(Boolean);

/**
 * The model of what the person approved: the form's fields, empty ones left out. A creator
 * whose name is unchanged keeps the ORCID iD and affiliation the source gave; the fields the
 * form does not show (related identifiers, funding) pass through as the source gave them.
 */
export function describedOf(reviewed: ReviewedMetadata, original: DescriptiveMetadata): DescriptiveMetadata {
  const known = new Map((original.creators ?? []).map((creator) => [creator.name, creator]));
  const described: DescriptiveMetadata = {
    title: reviewed.title.trim(),
    description: reviewed.description.trim(),
    creators: lines(reviewed.creators, /\n/).map((name) => known.get(name) ?? { name }),
    keywords: lines(reviewed.keywords, /,/),
    license: reviewed.license.trim(),
    publication_date: reviewed.publication_date.trim(),
    related_identifiers: original.related_identifiers,
    funding: original.funding,
  };
  return Object.fromEntries(
    Object.entries(described).filter(([, value]) => (Array.isArray(value) ? value.length > 0 : typeof value === 'string' && value !== '')),
  ) as DescriptiveMetadata;
}

export function sameMetadata(a: ReviewedMetadata, b: ReviewedMetadata): boolean {
  return (Object.keys(a) as (keyof ReviewedMetadata)[]).every((key) => a[key].trim() === b[key].trim());
}
