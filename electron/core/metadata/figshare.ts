import { bareOrcid, compact, fundingPhrase, htmlToText, isoDate, textToHtml, type DescriptiveMetadata, type Written } from './model.js';
import { licenseUrl, sameLicenseUrl, spdxOf } from './licenses.js';

// The common model as a figshare item (ArticleCreate of POST /account/articles, figshare
// swagger: `description`, `authors[{name, orcid_id}]` (at most 10 … figshare fills in its own
// author details for an `id`, none is sent), `keywords`, `license` (an integer: the `value` of
// one of GET /account/licenses, each `{value, name, url}`), `references` (URLs),
// `funding_list[{title}]`, `timeline.publisherPublication` YYYY-MM-DD), and back.

/** One row of GET /account/licenses. */
export interface FigshareLicense {
  value: number;
  name: string;
  url: string;
}

export interface FigshareFields {
  description?: string;
  authors?: { name: string; orcid_id?: string }[];
  keywords?: string[];
  license?: number;
  references?: string[];
  funding_list?: { title: string }[];
  timeline?: { publisherPublication: string };
}

/** `licenses`: the account's, read only when the model names a licence. */
export function figshareFields(source: DescriptiveMetadata | undefined, licenses: readonly FigshareLicense[]): Written<FigshareFields> {
  const fields: FigshareFields = {};
  const notes: string[] = [];
  if (!source) return { fields, notes };
  if (source.description) fields.description = textToHtml(source.description);
  if (source.creators?.length) {
    fields.authors = source.creators.map((c) => ({ name: c.name, ...(c.orcid ? { orcid_id: c.orcid } : {}) }));
    const affiliated = source.creators.filter((c) => c.affiliation);
    if (affiliated.length) notes.push(`figshare keeps no affiliation for an author; ${affiliated.map((c) => `${c.name} (${c.affiliation})`).join(', ')} were added without it.`);
  }
  if (source.keywords?.length) fields.keywords = [...source.keywords];
  if (source.license) {
    const url = licenseUrl(source.license);
    const license = url ? licenses.find((l) => sameLicenseUrl(l.url, url)) : licenses.find((l) => l.name.toLowerCase() === source.license!.toLowerCase());
    if (license) fields.license = license.value;
    else notes.push(`figshare offers this account no licence matching '${source.license}'; the item keeps figshare's default licence. Choose the licence on figshare before publishing.`);
  }
  if (source.publication_date) fields.timeline = { publisherPublication: source.publication_date };
  if (source.related_identifiers?.length) {
    fields.references = source.related_identifiers.map((r) => r.identifier).filter((id) => /^https?:\/\//i.test(id));
    const dropped = source.related_identifiers.filter((r) => !/^https?:\/\//i.test(r.identifier));
    if (dropped.length) notes.push(`figshare keeps references as links only; ${dropped.map((r) => r.identifier).join(', ')} were not set.`);
    const relations = [...new Set(source.related_identifiers.map((r) => r.relation))];
    notes.push(`figshare keeps references without their relation; the relations (${relations.join(', ')}) were not kept.`);
  }
  if (source.funding?.length) fields.funding_list = source.funding.map((f) => ({ title: fundingPhrase([f]) }));
  return { fields, notes };
}

/** An item (the article JSON of GET /account/articles/<id>) in the common model. */
export function readFigshareMetadata(article: Record<string, unknown>): DescriptiveMetadata {
  const a = article as {
    title?: string;
    description?: string;
    authors?: { full_name?: string; orcid_id?: string }[];
    tags?: string[];
    keywords?: string[];
    license?: { name?: string; url?: string };
    timeline?: { publisherPublication?: string; firstOnline?: string };
    published_date?: string | null;
    references?: string[];
    funding_list?: { title?: string }[];
  };
  const model: DescriptiveMetadata = {};
  if (a.title) model.title = a.title;
  if (a.description) model.description = htmlToText(a.description);
  model.creators = (a.authors ?? [])
    .filter((author) => author.full_name)
    .map((author) => {
      const orcid = bareOrcid(author.orcid_id);
      return { name: author.full_name!, ...(orcid ? { orcid } : {}) };
    });
  model.keywords = a.keywords ?? a.tags ?? [];
  if (a.license?.url || a.license?.name) model.license = spdxOf(a.license.url || a.license.name!);
  const date = isoDate(a.timeline?.publisherPublication) ?? isoDate(a.published_date) ?? isoDate(a.timeline?.firstOnline);
  if (date) model.publication_date = date;
  model.related_identifiers = (a.references ?? []).map((identifier) => ({ identifier, relation: 'references' }));
  model.funding = (a.funding_list ?? []).filter((f) => f.title).map((f) => ({ funder: f.title! }));
  return compact(model);
}
