import { describe, expect, it } from 'vitest';
import { depositMetadata } from './zenodo-deposit.js';

describe('depositMetadata', () => {
  it('sets what a deposition holds, and names what it cannot', () => {
    const { fields, notes } = depositMetadata({
      description: 'First <b>line</b>.\n\nSecond.',
      creators: [{ name: 'Lovelace, Ada', orcid: 'https://orcid.org/0000-0002-1825-0097', affiliation: 'Analytical Engines' }],
      keywords: ['a'],
      license: 'Some Custom Licence',
      funding: [{ funder: 'NSF', award: '123' }],
    });
    expect(fields).toEqual({
      description: '<p>First &lt;b&gt;line&lt;/b&gt;.</p><p>Second.</p>',
      creators: [{ name: 'Lovelace, Ada', affiliation: 'Analytical Engines', orcid: '0000-0002-1825-0097' }],
      keywords: ['a'],
    });
    expect(notes).toEqual([
      expect.stringMatching(/^Zenodo wants a licence identifier; the source's licence 'Some Custom Licence' was not set/),
      expect.stringMatching(/funding \(NSF 123\) was not set/),
    ]);
  });

  it('takes an SPDX identifier as the licence id', () => {
    expect(depositMetadata({ license: 'CC-BY-4.0' })).toEqual({ fields: { license: 'cc-by-4.0' }, notes: [] });
    expect(depositMetadata(undefined)).toEqual({ fields: {}, notes: [] });
  });
});
