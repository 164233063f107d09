import { bareOrcid, compact, fundingPhrase, htmlToText, isoDate, textToHtml, type Creator, type DescriptiveMetadata, type Written } from './model.js';
import { isSpdxLike, spdxOf } from './licenses.js';

// The common model as InvenioRDM's record metadata (`metadata` of POST /api/records, the
// records API of every InvenioRDM instance, Zenodo's included), and back. Schema:
// invenio-rdm-records `services/schemas/metadata.py` (MetadataSchema: `creators` of
// `person_or_org` {type, given_name, family_name, name, identifiers[{scheme, identifier}]}
// with `affiliations[{name}]`; `subjects[{subject}]`; `rights[{id}]` from the licenses
// vocabulary, whose ids are SPDX ids in lower case, or a custom `{title: {en}}`;
// `related_identifiers[{identifier, scheme, relation_type: {id}}]`; `funding[{funder: {name}}]`;
// `description` HTML; `publication_date` EDTF).

export interface InvenioMetadata {
  title?: string;
  description?: string;
  publication_date?: string;
  creators?: { person_or_org: { type: 'personal'; given_name?: string; family_name: string; name?: string; identifiers?: { scheme: string; identifier: string }[] }; affiliations?: { name: string }[] }[];
  subjects?: { subject: string }[];
  rights?: ({ id: string } | { title: { en: string } })[];
  related_identifiers?: { identifier: string; scheme: string; relation_type: { id: string } }[];
  funding?: { funder: { name: string } }[];
}

/**
 * Everything but the title and the publication date, which the writer always sets (a draft
 * needs them to read sensibly). `service` names the instance in notes ("Zenodo").
 */
export function invenioMetadata(source: DescriptiveMetadata | undefined, service = 'InvenioRDM'): Written<InvenioMetadata> {
  const fields: InvenioMetadata = {};
  const notes: string[] = [];
  if (!source) return { fields, notes };
  if (source.description) fields.description = textToHtml(source.description);
  if (source.publication_date) fields.publication_date = source.publication_date;
  if (source.creators?.length) fields.creators = source.creators.map(creatorOf);
  if (source.keywords?.length) fields.subjects = source.keywords.map((subject) => ({ subject }));
  if (source.license) fields.rights = [isSpdxLike(source.license) ? { id: source.license.toLowerCase() } : { title: { en: source.license } }];
  if (source.related_identifiers?.length) {
    fields.related_identifiers = source.related_identifiers.map(({ identifier, relation }) => ({ ...schemeOf(identifier), relation_type: { id: relation.toLowerCase() } }));
  }
  if (source.funding?.length) {
    fields.funding = source.funding.map(({ funder }) => ({ funder: { name: funder } }));
    const awards = source.funding.filter((f) => f.award);
    // an award needs its number and title, or an id from the instance's awards vocabulary
    if (awards.length) notes.push(`${service} names awards from its own list; the funders were set, the award numbers (${fundingPhrase(awards)}) were not. Add them on the record's page.`);
  }
  return { fields, notes };
}

/**
 * A creator as PersonOrOrganizationSchema wants it: a person needs `family_name`. "Family,
 * Given" is split at its comma; any other name is not split (which word is the family name is
 * not known: "Ludwig van Beethoven", "Kim Jong-un"), so it goes whole as the family name and
 * shows as written.
 */
function creatorOf(creator: Creator): NonNullable<InvenioMetadata['creators']>[number] {
  const comma = creator.name.indexOf(',');
  const [family, given] = comma > 0 ? [creator.name.slice(0, comma).trim(), creator.name.slice(comma + 1).trim()] : [creator.name.trim(), ''];
  return {
    person_or_org: {
      type: 'personal',
      family_name: family,
      ...(given ? { given_name: given } : {}),
      ...(creator.orcid ? { identifiers: [{ scheme: 'orcid', identifier: creator.orcid }] } : {}),
    },
    ...(creator.affiliation ? { affiliations: [{ name: creator.affiliation }] } : {}),
  };
}

function schemeOf(identifier: string): { identifier: string; scheme: string } {
  const doi = /^(?:https?:\/\/(?:dx\.)?doi\.org\/|doi:)?(10\.\d{4,}\/\S+)$/i.exec(identifier.trim());
  return doi ? { identifier: doi[1]!, scheme: 'doi' } : { identifier: identifier.trim(), scheme: 'url' };
}

/** A record's (or draft's) metadata in the common model. */
export function readInvenioMetadata(metadata: Record<string, unknown> | undefined): DescriptiveMetadata {
  const m = (metadata ?? {}) as InvenioMetadata & { rights?: { id?: string; title?: { en?: string } | string; link?: string }[]; publication_date?: string };
  const model: DescriptiveMetadata = {};
  if (m.title) model.title = m.title;
  if (m.description) model.description = htmlToText(m.description);
  model.creators = (m.creators ?? []).map(({ person_or_org: p, affiliations }) => {
    const name = [p.given_name, p.family_name].filter(Boolean).join(' ') || p.name || '';
    const orcid = bareOrcid(p.identifiers?.find((i) => i.scheme === 'orcid')?.identifier);
    const affiliation = affiliations?.[0]?.name;
    return { name, ...(orcid ? { orcid } : {}), ...(affiliation ? { affiliation } : {}) };
  }).filter((c) => c.name);
  model.keywords = (m.subjects ?? []).map((s) => s.subject).filter(Boolean);
  const right = m.rights?.[0];
  const rightTitle = typeof right?.title === 'string' ? right.title : right?.title?.en;
  if (right?.id || rightTitle) model.license = right?.id ? spdxOf(right.id) : rightTitle!;
  const date = isoDate(m.publication_date);
  if (date) model.publication_date = date;
  model.related_identifiers = (m.related_identifiers ?? []).map((r) => ({
    identifier: r.scheme === 'doi' ? `https://doi.org/${r.identifier}` : r.identifier,
    relation: relationName(r.relation_type?.id ?? ''),
  }));
  model.funding = (m.funding ?? []).map((f) => ({ funder: f.funder?.name ?? '' })).filter((f) => f.funder);
  return compact(model);
}

/** DataCite's camel-case relation names (isSupplementTo), from InvenioRDM's lower-case vocabulary ids. */
const RELATIONS = ['isCitedBy', 'cites', 'isSupplementTo', 'isSupplementedBy', 'isContinuedBy', 'continues', 'isDescribedBy', 'describes', 'hasMetadata', 'isMetadataFor', 'isNewVersionOf', 'isPreviousVersionOf', 'isPartOf', 'hasPart', 'isReferencedBy', 'references', 'isDocumentedBy', 'documents', 'isCompiledBy', 'compiles', 'isVariantFormOf', 'isOriginalFormOf', 'isIdenticalTo', 'isAlternateIdentifier', 'isReviewedBy', 'reviews', 'isDerivedFrom', 'isSourceOf', 'requires', 'isRequiredBy', 'isObsoletedBy', 'obsoletes'];
const RELATION_BY_ID = new Map(RELATIONS.map((name) => [name.toLowerCase(), name]));

export function relationName(id: string): string {
  return RELATION_BY_ID.get(id.toLowerCase()) ?? id;
}
