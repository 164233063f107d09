import { describe, expect, it } from 'vitest';
import { keepsMetadata, metadataFromDetail, sameMetadata } from './metadata.js';

describe('metadata review', () => {
  it('is asked for repositories only', () => {
    expect(keepsMetadata('zenodo')).toBe(true);
    expect(keepsMetadata('local')).toBe(false);
    expect(keepsMetadata('webdav')).toBe(false);
    // figshare keeps no carried metadata in the core: a review there would show edits that go nowhere
    expect(keepsMetadata('figshare')).toBe(false);
  });

  it('reads what the detail carries and guesses nothing', () => {
    const m = metadataFromDetail(
      { title: 'Survey', extra: { description: 'CTD casts', creators: [{ name: 'Ada' }, 'Bo'], tags: ['ocean', 'ctd'], license: { id: 'CC-BY-4.0' } } },
      'x',
    );
    expect(m).toEqual({ title: 'Survey', description: 'CTD casts', creators: 'Ada\nBo', keywords: 'ocean, ctd', license: 'CC-BY-4.0' });
    expect(metadataFromDetail(null, 'Folder')).toEqual({ title: 'Folder', description: '', creators: '', keywords: '', license: '' });
  });

  it('tells an edit from the original, ignoring surrounding spaces', () => {
    const a = metadataFromDetail(null, 'Folder');
    expect(sameMetadata(a, { ...a, title: ' Folder ' })).toBe(true);
    expect(sameMetadata(a, { ...a, description: 'new' })).toBe(false);
  });
});
