import { bareOrcid, compact, fundingPhrase, htmlToText, isoDate, textToHtml, type DescriptiveMetadata, type Written } from './model.js';
import { isSpdxLike, spdxOf } from './licenses.js';

// The common model as Zenodo's legacy deposit metadata (POST /api/deposit/depositions
// {metadata}; developers.zenodo.org "Deposit metadata"), and back: what a deposition can hold
// is set, and each field it cannot hold as given is named in a note for the job.

/** Fields of `metadata` besides title and upload_type, which the writer sets. */
export function depositMetadata(source: DescriptiveMetadata | undefined): Written<Record<string, unknown>> {
  const fields: Record<string, unknown> = {};
  const notes: string[] = [];
  if (!source) return { fields, notes };
  if (source.description) fields.description = textToHtml(source.description);
  if (source.creators?.length) {
    fields.creators = source.creators.map((creator) => ({
      name: creator.name,
      ...(creator.affiliation ? { affiliation: creator.affiliation } : {}),
      ...(creator.orcid ? { orcid: bareOrcid(creator.orcid) ?? creator.orcid } : {}),
    }));
  }
  if (source.keywords?.length) fields.keywords = [...source.keywords];
  if (source.license) {
    // Zenodo takes a licence id from its vocabulary: the SPDX id in lower case
    if (isSpdxLike(source.license)) fields.license = source.license.toLowerCase();
    else notes.push(`Zenodo wants a licence identifier; the source's licence '${source.license}' was not set on the deposition. Choose it on Zenodo before publishing.`);
  }
  if (source.publication_date) fields.publication_date = source.publication_date;
  if (source.related_identifiers?.length) fields.related_identifiers = source.related_identifiers.map(({ identifier, relation }) => ({ identifier, relation }));
  if (source.funding?.length) notes.push(`Zenodo records funding only as grants from its own list; the source's funding (${fundingPhrase(source.funding)}) was not set.`);
  return { fields, notes };
}

/** A deposition's metadata in the common model. */
export function readDepositMetadata(metadata: Record<string, unknown> | undefined): DescriptiveMetadata {
  const m = metadata ?? {};
  const model: DescriptiveMetadata = {};
  if (typeof m.title === 'string') model.title = m.title;
  if (typeof m.description === 'string') model.description = htmlToText(m.description);
  if (Array.isArray(m.creators)) {
    model.creators = (m.creators as { name?: string; orcid?: string; affiliation?: string }[])
      .filter((c) => c?.name)
      .map((c) => {
        const orcid = bareOrcid(c.orcid);
        return { name: c.name!, ...(orcid ? { orcid } : {}), ...(c.affiliation ? { affiliation: c.affiliation } : {}) };
      });
  }
  if (Array.isArray(m.keywords)) model.keywords = m.keywords.map(String);
  const license = typeof m.license === 'string' ? m.license : (m.license as { id?: string } | undefined)?.id;
  if (license) model.license = spdxOf(license);
  const date = isoDate(m.publication_date);
  if (date) model.publication_date = date;
  if (Array.isArray(m.related_identifiers)) {
    model.related_identifiers = (m.related_identifiers as { identifier?: string; relation?: string }[])
      .filter((r) => r?.identifier)
      .map((r) => ({ identifier: r.identifier!, relation: r.relation ?? 'isRelatedTo' }));
  }
  if (Array.isArray(m.grants)) {
    model.funding = (m.grants as { id?: string; funder?: { name?: string }; code?: string }[])
      .map((g) => ({ funder: g.funder?.name ?? g.id ?? '', ...(g.code ? { award: g.code } : {}) }))
      .filter((f) => f.funder);
  }
  return compact(model);
}
