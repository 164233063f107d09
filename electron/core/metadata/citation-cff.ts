import { parse } from 'yaml';
import { bareOrcid, compact, fullName, isoDate, type Creator, type DescriptiveMetadata } from './model.js';
import { spdxOf } from './licenses.js';

// CITATION.cff (Citation File Format 1.2.0, https://github.com/citation-file-format/citation-file-format
// schema.json) in the common model: title, abstract, authors (a person's given-names and
// family-names, or an entity's name; orcid; affiliation), keywords, license (an SPDX id, or
// a list of them: the first is kept), date-released, and the doi / identifiers /
// repository-code as related identifiers. YAML is parsed by the `yaml` package.

export const CITATION_CFF = 'CITATION.cff';

/** The file's metadata; null when it is not a CFF mapping (a broken file is not guessed at). */
export function readCitationCff(text: string): DescriptiveMetadata | null {
  let document: unknown;
  try {
    document = parse(text);
  } catch {
    return null;
  }
  if (!document || typeof document !== 'object' || Array.isArray(document)) return null;
  const cff = document as Record<string, unknown>;
  const metadata: DescriptiveMetadata = {};
  if (typeof cff.title === 'string') metadata.title = cff.title.trim();
  if (typeof cff.abstract === 'string') metadata.description = cff.abstract.trim();
  if (Array.isArray(cff.authors)) metadata.creators = cff.authors.map(creatorOf).filter((c): c is Creator => c !== null);
  if (Array.isArray(cff.keywords)) metadata.keywords = cff.keywords.map(String);
  const license = Array.isArray(cff.license) ? cff.license[0] : cff.license;
  if (typeof license === 'string') metadata.license = spdxOf(license);
  const released = isoDate(cff['date-released']);
  if (released) metadata.publication_date = released;
  metadata.related_identifiers = relatedOf(cff);
  return compact(metadata);
}

function creatorOf(author: unknown): Creator | null {
  if (!author || typeof author !== 'object') return null;
  const a = author as Record<string, unknown>;
  const name = typeof a.name === 'string' && a.name.trim() ? a.name.trim() : fullName(a['given-names'], a['family-names']);
  if (!name) return null;
  const orcid = bareOrcid(a.orcid);
  const affiliation = typeof a.affiliation === 'string' && a.affiliation.trim() ? a.affiliation.trim() : undefined;
  return { name, ...(orcid ? { orcid } : {}), ...(affiliation ? { affiliation } : {}) };
}

/** The work's own DOI is what the data "is identical to" elsewhere; a code repository "is supplemented by" it. */
function relatedOf(cff: Record<string, unknown>): NonNullable<DescriptiveMetadata['related_identifiers']> {
  const related: NonNullable<DescriptiveMetadata['related_identifiers']> = [];
  if (typeof cff.doi === 'string') related.push({ identifier: `https://doi.org/${cff.doi.trim()}`, relation: 'isIdenticalTo' });
  if (Array.isArray(cff.identifiers)) {
    for (const item of cff.identifiers as { type?: unknown; value?: unknown }[]) {
      if (typeof item?.value !== 'string') continue;
      const identifier = item.type === 'doi' ? `https://doi.org/${item.value.trim()}` : item.value.trim();
      if (!related.some((r) => r.identifier === identifier)) related.push({ identifier, relation: 'isIdenticalTo' });
    }
  }
  if (typeof cff['repository-code'] === 'string') related.push({ identifier: cff['repository-code'].trim(), relation: 'isSupplementedBy' });
  return related;
}
