import type { DescriptiveMetadata } from '../../target.js';

// The common model (target.ts DescriptiveMetadata) as InvenioRDM's record metadata
// (invenio-rdm-records services/schemas/metadata.py, the `metadata` of POST /api/records):
// what a draft can hold is set, and each field it cannot hold as given is named in a note for
// the job (never dropped silently, never filled in by guess).

export interface RecordMetadata {
  /** fields of `metadata` besides title, resource_type and publication_date, which the writer sets */
  fields: Record<string, unknown>;
  notes: string[];
}

/** `service` names the instance in notes ("Zenodo", "InvenioRDM"). */
export function recordMetadata(source: DescriptiveMetadata | undefined, service: string): RecordMetadata {
  const fields: Record<string, unknown> = {};
  const notes: string[] = [];
  if (!source) return { fields, notes };
  if (source.description) fields.description = source.description.split(/\n{2,}/).map((paragraph) => `<p>${escapeHtml(paragraph)}</p>`).join('');
  if (source.creators?.length) fields.creators = source.creators.map(creator);
  // free-text subjects (SubjectSchema: `subject` without an id)
  if (source.keywords?.length) fields.subjects = source.keywords.map((subject) => ({ subject }));
  if (source.license) {
    // a licence from the instance's vocabulary: the SPDX id in lower case ("cc-by-4.0")
    if (/^[A-Za-z0-9.+-]+$/.test(source.license)) fields.rights = [{ id: source.license.toLowerCase() }];
    else notes.push(`${service} wants a licence identifier; the source's licence '${source.license}' was not set on the record. Choose it on ${service} before publishing.`);
  }
  if (source.publication_date) fields.publication_date = source.publication_date;
  const related = (source.related_identifiers ?? []).flatMap(({ identifier, relation }) => {
    const scheme = schemeOf(identifier);
    if (scheme) return [{ identifier, scheme, relation_type: { id: relation.toLowerCase() } }];
    notes.push(`${service} records related identifiers as DOIs or URLs; '${identifier}' was not set.`);
    return [];
  });
  if (related.length) fields.related_identifiers = related;
  if (source.funding?.length) {
    notes.push(`${service} records funding only as awards from its own list; the source's funding (${source.funding.map((f) => [f.funder, f.award].filter(Boolean).join(' ')).join('; ')}) was not set.`);
  }
  return { fields, notes };
}

/**
 * A creator as PersonOrOrganizationSchema wants it: a person needs `family_name`. "Family,
 * Given" is split at its comma; any other name is not split (which word is the family name is
 * not known), so it goes whole as the family name and shows as written.
 */
function creator(source: { name: string; orcid?: string; affiliation?: string }): Record<string, unknown> {
  const comma = source.name.indexOf(',');
  const names = comma === -1 ? { family_name: source.name.trim() } : { family_name: source.name.slice(0, comma).trim(), given_name: source.name.slice(comma + 1).trim() };
  const orcid = source.orcid?.replace(/^https?:\/\/orcid\.org\//i, '');
  return {
    person_or_org: { type: 'personal', ...names, ...(orcid ? { identifiers: [{ scheme: 'orcid', identifier: orcid }] } : {}) },
    ...(source.affiliation ? { affiliations: [{ name: source.affiliation }] } : {}),
  };
}

function schemeOf(identifier: string): 'doi' | 'url' | null {
  if (/^(?:https?:\/\/(?:dx\.)?doi\.org\/)?10\.\d{4,9}\/\S+$/i.test(identifier)) return 'doi';
  if (/^https?:\/\/\S+$/i.test(identifier)) return 'url';
  return null;
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}
