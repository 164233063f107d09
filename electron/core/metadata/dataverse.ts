import { bareOrcid, compact, isoDate, type DescriptiveMetadata, type Written } from './model.js';
import { licenseUrl, sameLicenseUrl, spdxOf } from './licenses.js';

// The common model as a Dataverse dataset's citation block, and back (Dataverse guides,
// native-api "Create a Dataset in a Dataverse Collection" and its dataset-create-new-all-
// default-fields.json; the citation block's fields in citation.tsv): `title`; `author`
// {authorName, authorAffiliation, authorIdentifierScheme "ORCID", authorIdentifier};
// `dsDescription` {dsDescriptionValue}; `keyword` {keywordValue}; `subject` (required,
// controlled vocabulary: the model has none, so "Other"); `publication` {publicationIDType,
// publicationIDNumber, publicationURL} for related identifiers; `grantNumber`
// {grantNumberAgency, grantNumberValue} for funding. The licence is the version's `license`
// {name, uri}, one of the installation's (GET /api/licenses). The publication date is
// Dataverse's own, set when the owner publishes.

export interface CitationField {
  typeName: string;
  multiple: boolean;
  typeClass: 'primitive' | 'compound' | 'controlledVocabulary';
  value: unknown;
}

/** One row of GET /api/licenses. */
export interface DataverseLicense {
  name: string;
  uri: string;
  active?: boolean;
}

export interface DataverseDatasetFields {
  /** the citation block's fields besides title and datasetContact, which the writer sets */
  citation: CitationField[];
  license?: { name: string; uri: string };
}

const primitive = (typeName: string, value: string): CitationField => ({ typeName, multiple: false, typeClass: 'primitive', value });
const compound = (typeName: string, value: Record<string, CitationField>[]): CitationField => ({ typeName, multiple: true, typeClass: 'compound', value });

/**
 * `fallbackAuthor`: the token's user, when the model names no creator (a dataset needs an
 * author). `description`: used when the model has none (a dataset needs one).
 */
export function dataverseFields(source: DescriptiveMetadata | undefined, defaults: { author: string; description: string }, licenses: readonly DataverseLicense[]): Written<DataverseDatasetFields> {
  const notes: string[] = [];
  const creators = source?.creators?.length ? source.creators : [{ name: defaults.author }];
  const citation: CitationField[] = [
    compound(
      'author',
      creators.map((c) => ({
        authorName: primitive('authorName', c.name),
        ...(c.affiliation ? { authorAffiliation: primitive('authorAffiliation', c.affiliation) } : {}),
        ...(c.orcid
          ? { authorIdentifierScheme: { typeName: 'authorIdentifierScheme', multiple: false, typeClass: 'controlledVocabulary', value: 'ORCID' } as CitationField, authorIdentifier: primitive('authorIdentifier', c.orcid) }
          : {}),
      })),
    ),
    compound('dsDescription', [{ dsDescriptionValue: primitive('dsDescriptionValue', source?.description || defaults.description) }]),
    { typeName: 'subject', multiple: true, typeClass: 'controlledVocabulary', value: ['Other'] },
  ];
  if (source?.keywords?.length) citation.push(compound('keyword', source.keywords.map((k) => ({ keywordValue: primitive('keywordValue', k) }))));
  if (source?.related_identifiers?.length) {
    citation.push(
      compound(
        'publication',
        source.related_identifiers.map(({ identifier }) => {
          const doi = /^(?:https?:\/\/(?:dx\.)?doi\.org\/|doi:)(10\.\d{4,}\/\S+)$/i.exec(identifier.trim());
          return {
            publicationIDType: { typeName: 'publicationIDType', multiple: false, typeClass: 'controlledVocabulary', value: doi ? 'doi' : 'url' } as CitationField,
            publicationIDNumber: primitive('publicationIDNumber', doi ? doi[1]! : identifier),
            ...(/^https?:\/\//i.test(identifier) ? { publicationURL: primitive('publicationURL', identifier) } : {}),
          };
        }),
      ),
    );
    notes.push(`Dataverse lists related identifiers as related publications, without the relation; the relations (${[...new Set(source.related_identifiers.map((r) => r.relation))].join(', ')}) were not kept.`);
  }
  if (source?.funding?.length) {
    citation.push(compound('grantNumber', source.funding.map((f) => ({ grantNumberAgency: primitive('grantNumberAgency', f.funder), ...(f.award ? { grantNumberValue: primitive('grantNumberValue', f.award) } : {}) }))));
  }
  if (source?.publication_date) notes.push(`Dataverse sets a dataset's publication date itself when it is published; the source's (${source.publication_date}) was not set.`);
  let license: DataverseDatasetFields['license'];
  if (source?.license) {
    const url = licenseUrl(source.license);
    const found = licenses.find((l) => l.active !== false && (url ? sameLicenseUrl(l.uri, url) : l.name.toLowerCase() === source.license!.toLowerCase()));
    if (found) license = { name: found.name, uri: found.uri };
    else notes.push(`This Dataverse installation offers no licence matching '${source.license}'; the dataset has the installation's default. Choose its licence in Dataverse before publishing.`);
  }
  return { fields: { citation, ...(license ? { license } : {}) }, notes };
}

/** A dataset version (GET /api/datasets/<id>/versions/:latest) in the common model. */
export function readDataverseMetadata(version: { metadataBlocks?: { citation?: { fields?: { typeName: string; value: unknown }[] } }; license?: { name?: string; uri?: string } | string; releaseTime?: string; versionState?: string }): DescriptiveMetadata {
  const fields = version.metadataBlocks?.citation?.fields ?? [];
  const field = (name: string) => fields.find((f) => f.typeName === name)?.value;
  const compounds = (name: string) => (Array.isArray(field(name)) ? (field(name) as Record<string, { value?: unknown }>[]) : []);
  const sub = (row: Record<string, { value?: unknown }>, name: string) => (typeof row[name]?.value === 'string' ? (row[name]!.value as string).trim() : '');
  const model: DescriptiveMetadata = {};
  if (typeof field('title') === 'string') model.title = field('title') as string;
  const description = compounds('dsDescription').map((row) => sub(row, 'dsDescriptionValue')).filter(Boolean).join('\n\n');
  if (description) model.description = description;
  model.creators = compounds('author')
    .filter((row) => sub(row, 'authorName'))
    .map((row) => {
      const orcid = sub(row, 'authorIdentifierScheme') === 'ORCID' ? bareOrcid(sub(row, 'authorIdentifier')) : undefined;
      const affiliation = sub(row, 'authorAffiliation');
      return { name: sub(row, 'authorName'), ...(orcid ? { orcid } : {}), ...(affiliation ? { affiliation } : {}) };
    });
  model.keywords = compounds('keyword').map((row) => sub(row, 'keywordValue')).filter(Boolean);
  const license = typeof version.license === 'string' ? version.license : (version.license?.uri ?? version.license?.name);
  if (license) model.license = spdxOf(license);
  if (version.versionState === 'RELEASED') {
    const released = isoDate(version.releaseTime);
    if (released) model.publication_date = released;
  }
  model.related_identifiers = compounds('publication')
    .map((row) => {
      const type = sub(row, 'publicationIDType');
      const number = sub(row, 'publicationIDNumber');
      return sub(row, 'publicationURL') || (type === 'doi' && number ? `https://doi.org/${number}` : number);
    })
    .filter(Boolean)
    .map((identifier) => ({ identifier, relation: 'isSupplementedBy' }));
  model.funding = compounds('grantNumber')
    .filter((row) => sub(row, 'grantNumberAgency'))
    .map((row) => ({ funder: sub(row, 'grantNumberAgency'), ...(sub(row, 'grantNumberValue') ? { award: sub(row, 'grantNumberValue') } : {}) }));
  return compact(model);
}
