import { describe, expect, it } from 'vitest';
import { readCitationCff } from './citation-cff.js';
import { dataverseFields, readDataverseMetadata } from './dataverse.js';
import { figshareFields, readFigshareMetadata } from './figshare.js';
import { githubRepositoryFields, repositoryMetadata } from './forge.js';
import { invenioMetadata, readInvenioMetadata } from './invenio.js';
import { htmlToText, textToHtml, type DescriptiveMetadata } from './model.js';
import { readRoCrate } from './ro-crate.js';

const full: DescriptiveMetadata = {
  title: 'Coastal Survey',
  description: 'Salinity at two sites & monthly samples.\n\nSecond paragraph.',
  creators: [{ name: 'Ada Lovelace', orcid: '0000-0002-1825-0097', affiliation: 'Analytical Society' }, { name: 'Charles Babbage' }],
  keywords: ['coast', 'salinity'],
  license: 'CC-BY-4.0',
  publication_date: '2024-05-01',
  related_identifiers: [{ identifier: 'https://doi.org/10.5281/zenodo.1001', relation: 'isSupplementTo' }],
  funding: [{ funder: 'Wellcome Trust', award: '204841' }],
};

describe('CITATION.cff', () => {
  it('reads title, abstract, authors with ORCID and affiliation, keywords, licence, date and identifiers', () => {
    const cff = [
      'cff-version: 1.2.0',
      'message: If you use this, cite it.',
      'title: Survey analysis code',
      'abstract: Scripts that clean the survey.',
      'authors:',
      '  - given-names: Ada',
      '    family-names: Lovelace',
      '    orcid: https://orcid.org/0000-0002-1825-0097',
      '    affiliation: Analytical Society',
      '  - name: The Survey Team',
      'keywords: [survey, cleaning]',
      'license: MIT',
      'date-released: 2024-05-01',
      'doi: 10.5281/zenodo.1001',
      'repository-code: https://github.com/ada/survey',
    ].join('\n');
    expect(readCitationCff(cff)).toEqual({
      title: 'Survey analysis code',
      description: 'Scripts that clean the survey.',
      creators: [{ name: 'Ada Lovelace', orcid: '0000-0002-1825-0097', affiliation: 'Analytical Society' }, { name: 'The Survey Team' }],
      keywords: ['survey', 'cleaning'],
      license: 'MIT',
      publication_date: '2024-05-01',
      related_identifiers: [
        { identifier: 'https://doi.org/10.5281/zenodo.1001', relation: 'isIdenticalTo' },
        { identifier: 'https://github.com/ada/survey', relation: 'isSupplementedBy' },
      ],
    });
  });

  it('answers null for text that is not a CFF mapping', () => {
    expect(readCitationCff('- just\n- a list')).toBeNull();
    expect(readCitationCff('title: [unclosed')).toBeNull();
  });

  it('wins over what the forge says of the repository, which fills the rest', () => {
    const merged = repositoryMetadata({ name: 'survey', description: 'Repo description', topics: ['topic'], license: 'Apache-2.0' }, { title: 'Survey', creators: [{ name: 'Ada' }] });
    expect(merged).toEqual({ title: 'Survey', description: 'Repo description', keywords: ['topic'], license: 'Apache-2.0', creators: [{ name: 'Ada' }] });
    expect(repositoryMetadata({ name: 'x', description: null, topics: [], license: 'NOASSERTION' }, null)).toEqual({ title: 'x' });
  });
});

describe('a new GitHub repository', () => {
  it('takes one line of at most 350 characters (counted in characters, not UTF-16 units), saying what was changed', () => {
    const long = githubRepositoryFields({ description: `Mesures\tà ${'é'.repeat(400)}` });
    expect([...long.fields.description!]).toHaveLength(350);
    expect(long.fields.description!.startsWith('Mesures à éé')).toBe(true);
    expect(long.notes).toEqual(["GitHub keeps a description of one line and at most 350 characters, so the source's was joined into one line and cut to 350 characters."]);
    expect(githubRepositoryFields({ description: '  Plain  text.  ' })).toEqual({ fields: { description: 'Plain  text.' }, notes: [] });
  });

  it('makes a web address of the work itself its homepage, never another relation or a bare DOI', () => {
    expect(githubRepositoryFields({ related_identifiers: [{ identifier: '10.5281/zenodo.1', relation: 'isIdenticalTo' }, { identifier: 'https://example.org/paper', relation: 'isCitedBy' }] }).fields.homepage).toBeUndefined();
    expect(githubRepositoryFields(full).fields.homepage).toBeUndefined();
    const record = githubRepositoryFields({ related_identifiers: [{ identifier: 'https://example.org/paper', relation: 'isCitedBy' }, { identifier: 'https://doi.org/10.5281/zenodo.1', relation: 'isIdenticalTo' }] });
    expect(record.fields.homepage).toBe('https://doi.org/10.5281/zenodo.1');
    expect(record.notes).toEqual(["A GitHub repository holds no related identifiers other than the one made its homepage; the source's were not carried."]);
  });

  it('makes keywords topics once each, in lower case with hyphens for spaces; the rest is named', () => {
    const { fields, notes } = githubRepositoryFields({ keywords: ['Ocean', 'ocean', 'sea  ice', 'CO₂', 'x'.repeat(51), 'deep_sea'] });
    expect(fields.topics).toEqual(['ocean', 'sea-ice']);
    expect(notes).toEqual([
      "GitHub topics are lower case with hyphens for spaces, so these keywords were written as: 'Ocean' → 'ocean', 'sea  ice' → 'sea-ice'.",
      `GitHub topics hold only lowercase letters, numbers and hyphens (at most 50 characters), so the keywords 'CO₂', '${'x'.repeat(51)}', 'deep_sea' were not added as topics.`,
    ]);
  });
});

describe('ro-crate-metadata.json', () => {
  it('reads the root data entity, following references within the graph', () => {
    const crate = {
      '@context': 'https://w3id.org/ro/crate/1.1/context',
      '@graph': [
        { '@id': 'ro-crate-metadata.json', '@type': 'CreativeWork', about: { '@id': './' }, conformsTo: { '@id': 'https://w3id.org/ro/crate/1.1' } },
        {
          '@id': './',
          '@type': 'Dataset',
          name: 'Coastal Survey',
          description: 'Salinity.',
          author: [{ '@id': 'https://orcid.org/0000-0002-1825-0097' }, { '@id': '#babbage' }],
          keywords: 'coast, salinity',
          license: { '@id': 'https://creativecommons.org/licenses/by/4.0/' },
          datePublished: '2024-05-01T10:00:00Z',
          funder: { '@id': '#wellcome' },
        },
        { '@id': 'https://orcid.org/0000-0002-1825-0097', '@type': 'Person', name: 'Ada Lovelace', affiliation: { '@id': '#society' } },
        { '@id': '#babbage', '@type': 'Person', givenName: 'Charles', familyName: 'Babbage' },
        { '@id': '#society', '@type': 'Organization', name: 'Analytical Society' },
        { '@id': '#wellcome', '@type': 'Organization', name: 'Wellcome Trust' },
      ],
    };
    expect(readRoCrate(JSON.stringify(crate))).toEqual({
      title: 'Coastal Survey',
      description: 'Salinity.',
      creators: [{ name: 'Ada Lovelace', orcid: '0000-0002-1825-0097', affiliation: 'Analytical Society' }, { name: 'Charles Babbage' }],
      keywords: ['coast', 'salinity'],
      license: 'CC-BY-4.0',
      publication_date: '2024-05-01',
      funding: [{ funder: 'Wellcome Trust' }],
    });
  });

  it('answers null without a descriptor naming a root', () => {
    expect(readRoCrate('{"@graph": [{"@id": "./"}]}')).toBeNull();
    expect(readRoCrate('not json')).toBeNull();
  });
});

describe('round trips through each service model', () => {
  it('InvenioRDM keeps every field but award numbers, and says so', () => {
    const { fields, notes } = invenioMetadata(full);
    expect(fields.creators![0]).toEqual({ person_or_org: { type: 'personal', family_name: 'Ada Lovelace', identifiers: [{ scheme: 'orcid', identifier: '0000-0002-1825-0097' }] }, affiliations: [{ name: 'Analytical Society' }] });
    expect(fields.rights).toEqual([{ id: 'cc-by-4.0' }]);
    expect(fields.related_identifiers).toEqual([{ identifier: '10.5281/zenodo.1001', scheme: 'doi', relation_type: { id: 'issupplementto' } }]);
    expect(readInvenioMetadata({ title: full.title, ...fields })).toEqual({ ...full, funding: [{ funder: 'Wellcome Trust' }] });
    expect(notes).toEqual([expect.stringContaining('award numbers (Wellcome Trust 204841)')]);
  });

  it('figshare maps the licence to the account\'s licence value and names what it cannot keep', () => {
    const licenses = [{ value: 1, name: 'CC BY 4.0', url: 'https://creativecommons.org/licenses/by/4.0/' }];
    const { fields, notes } = figshareFields(full, licenses);
    expect(fields).toMatchObject({ license: 1, keywords: ['coast', 'salinity'], authors: [{ name: 'Ada Lovelace', orcid_id: '0000-0002-1825-0097' }, { name: 'Charles Babbage' }], timeline: { publisherPublication: '2024-05-01' } });
    expect(notes.join(' ')).toMatch(/affiliation.*Ada Lovelace \(Analytical Society\)/);
    expect(notes.join(' ')).toMatch(/without their relation/);
    const back = readFigshareMetadata({ title: full.title, ...fields, authors: [{ full_name: 'Ada Lovelace', orcid_id: '0000-0002-1825-0097' }, { full_name: 'Charles Babbage' }], license: licenses[0] });
    expect(back).toMatchObject({ title: full.title, description: full.description, keywords: full.keywords, license: 'CC-BY-4.0', publication_date: '2024-05-01', funding: [{ funder: 'Wellcome Trust 204841' }] });
    expect(figshareFields({ license: 'Some Custom Licence' }, licenses).notes).toEqual([expect.stringContaining("no licence matching 'Some Custom Licence'")]);
  });

  it('Dataverse writes the citation block with ORCID as authorIdentifierScheme, and reads it back', () => {
    const licenses = [{ name: 'CC BY 4.0', uri: 'http://creativecommons.org/licenses/by/4.0' }];
    const { fields, notes } = dataverseFields(full, { author: 'Doe, Jane', description: 'Deposited with Ferry.' }, licenses);
    const author = fields.citation.find((f) => f.typeName === 'author')!.value as Record<string, { value: unknown }>[];
    expect(author[0]!.authorIdentifierScheme!.value).toBe('ORCID');
    expect(fields.citation.find((f) => f.typeName === 'subject')!.value).toEqual(['Other']);
    expect(fields.license).toEqual({ name: 'CC BY 4.0', uri: 'http://creativecommons.org/licenses/by/4.0' });
    expect(notes.join(' ')).toMatch(/publication date itself/);
    const back = readDataverseMetadata({ metadataBlocks: { citation: { fields: [{ typeName: 'title', value: full.title }, ...fields.citation] } }, license: fields.license });
    expect(back).toEqual({ ...full, publication_date: undefined, related_identifiers: [{ identifier: 'https://doi.org/10.5281/zenodo.1001', relation: 'isSupplementedBy' }] });
  });

  it('Dataverse without creators makes the token\'s user the author (a dataset needs one)', () => {
    const { fields } = dataverseFields(undefined, { author: 'Doe, Jane', description: 'Deposited with Ferry.' }, []);
    expect(JSON.stringify(fields.citation)).toContain('Doe, Jane');
  });
});

describe('descriptions', () => {
  it('plain text and HTML paragraphs turn into each other', () => {
    const text = 'One & two <three>.\n\nSecond line\nwith a break.';
    expect(htmlToText(textToHtml(text))).toBe(text);
  });
});
