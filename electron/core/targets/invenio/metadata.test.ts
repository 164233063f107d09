import { describe, expect, it } from 'vitest';
import { recordMetadata } from './metadata.js';

describe('recordMetadata (the records API schema)', () => {
  it('sets what a record holds, and names what it cannot', () => {
    const { fields, notes } = recordMetadata(
      {
        description: 'First <b>line</b>.\n\nSecond.',
        creators: [{ name: 'Lovelace, Ada', orcid: 'https://orcid.org/0000-0002-1825-0097', affiliation: 'Analytical Engines' }, { name: 'Charles Babbage' }],
        keywords: ['a'],
        license: 'Some Custom Licence',
        related_identifiers: [{ identifier: '10.5281/zenodo.1', relation: 'IsSupplementTo' }, { identifier: 'urn:x', relation: 'References' }],
        funding: [{ funder: 'NSF', award: '123' }],
      },
      'Zenodo',
    );
    expect(fields).toEqual({
      description: '<p>First &lt;b&gt;line&lt;/b&gt;.</p><p>Second.</p>',
      creators: [
        { person_or_org: { type: 'personal', family_name: 'Lovelace', given_name: 'Ada', identifiers: [{ scheme: 'orcid', identifier: '0000-0002-1825-0097' }] }, affiliations: [{ name: 'Analytical Engines' }] },
        // not split by guess: which word is the family name is not known
        { person_or_org: { type: 'personal', family_name: 'Charles Babbage' } },
      ],
      subjects: [{ subject: 'a' }],
      related_identifiers: [{ identifier: '10.5281/zenodo.1', scheme: 'doi', relation_type: { id: 'issupplementto' } }],
    });
    expect(notes).toEqual([
      expect.stringMatching(/^Zenodo wants a licence identifier; the source's licence 'Some Custom Licence' was not set/),
      expect.stringMatching(/'urn:x' was not set/),
      expect.stringMatching(/funding \(NSF 123\) was not set/),
    ]);
  });

  it('takes an SPDX identifier as the licence id', () => {
    expect(recordMetadata({ license: 'CC-BY-4.0' }, 'Zenodo')).toEqual({ fields: { rights: [{ id: 'cc-by-4.0' }] }, notes: [] });
    expect(recordMetadata(undefined, 'Zenodo')).toEqual({ fields: {}, notes: [] });
  });
});
