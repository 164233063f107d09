import type { DescriptiveMetadata } from '../../target.js';

// The common model (target.ts DescriptiveMetadata) as Zenodo's legacy deposit metadata
// (POST /api/deposit/depositions {metadata}): what a deposition can hold is set, and each
// field it cannot hold as given is named in a note for the job (never dropped silently).

export interface DepositMetadata {
  /** fields of `metadata` besides title and upload_type, which the writer sets */
  fields: Record<string, unknown>;
  notes: string[];
}

export function depositMetadata(source: DescriptiveMetadata | undefined): DepositMetadata {
  const fields: Record<string, unknown> = {};
  const notes: string[] = [];
  if (!source) return { fields, notes };
  if (source.description) fields.description = source.description.split(/\n{2,}/).map((paragraph) => `<p>${escapeHtml(paragraph)}</p>`).join('');
  if (source.creators?.length) {
    fields.creators = source.creators.map((creator) => ({
      name: creator.name,
      ...(creator.affiliation ? { affiliation: creator.affiliation } : {}),
      ...(creator.orcid ? { orcid: creator.orcid.replace(/^https?:\/\/orcid\.org\//i, '') } : {}),
    }));
  }
  if (source.keywords?.length) fields.keywords = [...source.keywords];
  if (source.license) {
    // Zenodo takes a licence id from its vocabulary: the SPDX id in lower case
    if (/^[A-Za-z0-9.+-]+$/.test(source.license)) fields.license = source.license.toLowerCase();
    else notes.push(`Zenodo wants a licence identifier; the source's licence '${source.license}' was not set on the deposition. Choose it on Zenodo before publishing.`);
  }
  if (source.publication_date) fields.publication_date = source.publication_date;
  if (source.related_identifiers?.length) fields.related_identifiers = source.related_identifiers.map(({ identifier, relation }) => ({ identifier, relation }));
  if (source.funding?.length) {
    notes.push(`Zenodo records funding only as grants from its own list; the source's funding (${source.funding.map((f) => [f.funder, f.award].filter(Boolean).join(' ')).join('; ')}) was not set.`);
  }
  return { fields, notes };
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}
