import { describe, expect, it } from 'vitest';
import { describedOf, reviewOf, sameMetadata } from './metadata.js';

describe('metadata review', () => {
  it('shows what the source says and guesses nothing', () => {
    const m = reviewOf({ title: 'Survey', description: 'CTD casts', creators: [{ name: 'Ada' }, { name: 'Bo' }], keywords: ['ocean', 'ctd'], license: 'CC-BY-4.0' }, 'x');
    expect(m).toEqual({ title: 'Survey', description: 'CTD casts', creators: 'Ada\nBo', keywords: 'ocean, ctd', license: 'CC-BY-4.0', publication_date: '' });
    expect(reviewOf({}, 'Folder')).toEqual({ title: 'Folder', description: '', creators: '', keywords: '', license: '', publication_date: '' });
  });

  it('turns the form back into the model: lists split, empty fields left out, a known creator keeps its ORCID iD', () => {
    const original = { creators: [{ name: 'Ada', orcid: '0000-0002-1825-0097', affiliation: 'Analytical Society' }], funding: [{ funder: 'NSF' }] };
    const form = { ...reviewOf(original, 'Folder'), creators: ' Ada \n\nBo\n', keywords: 'ocean, , ctd ,', description: '  ' };
    expect(describedOf(form, original)).toEqual({
      title: 'Folder',
      creators: [{ name: 'Ada', orcid: '0000-0002-1825-0097', affiliation: 'Analytical Society' }, { name: 'Bo' }],
      keywords: ['ocean', 'ctd'],
      funding: [{ funder: 'NSF' }],
    });
  });

  it('tells an edit from the original, ignoring surrounding spaces', () => {
    const a = reviewOf({}, 'Folder');
    expect(sameMetadata(a, { ...a, title: ' Folder ' })).toBe(true);
    expect(sameMetadata(a, { ...a, description: 'new' })).toBe(false);
  });
});
