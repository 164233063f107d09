import { describe, expect, it } from 'vitest';
import { commandForKey, paneCommands, type PaneFacts } from './pane-commands.js';

const facts: PaneFacts = {
  hasTarget: true,
  canUpload: true,
  canDownload: true,
  selected: 1,
  selectedFolders: 0,
  offers: { delete: true, rename: true, move: true, create_folder: true },
  searches: true,
  verifies: false,
  atTop: true,
  sameTargetAcross: false,
  otherHasOne: false,
  otherSideName: 'right',
};

const ids = (f: PaneFacts) => paneCommands(f).map((c) => c.id);

describe('paneCommands', () => {
  it('offers only what the place supports', () => {
    expect(ids(facts)).toContain('delete');
    const zenodo = { ...facts, canUpload: true, offers: { delete: false, rename: false, move: false, create_folder: false } };
    expect(ids(zenodo)).not.toContain('delete');
    expect(ids(zenodo)).not.toContain('rename');
    expect(ids({ ...facts, canUpload: false, offers: zenodo.offers })).not.toContain('new-folder');
  });

  it('disables what cannot run now: rename needs one item, move the same place across, compare one item each side', () => {
    const byId = (f: PaneFacts) => Object.fromEntries(paneCommands(f).map((c) => [c.id, c.enabled]));
    expect(byId({ ...facts, selected: 2 }).rename).toBe(false);
    expect(byId(facts).move).toBe(false);
    expect(byId({ ...facts, sameTargetAcross: true }).move).toBe(true);
    expect(byId(facts).compare).toBe(false);
    expect(byId({ ...facts, otherHasOne: true }).compare).toBe(true);
  });

  it('maps the commander keys, and leaves Alt combinations to the grid', () => {
    const key = (k: string, mods: Partial<Record<'ctrlKey' | 'metaKey' | 'shiftKey' | 'altKey', boolean>> = {}) =>
      commandForKey({ key: k, ctrlKey: false, metaKey: false, shiftKey: false, altKey: false, ...mods });
    expect(key('F2')).toBe('rename');
    expect(key('Delete')).toBe('delete');
    expect(key('F6')).toBe('move');
    expect(key('F7')).toBe('new-folder');
    expect(key('f', { ctrlKey: true })).toBe('search');
    expect(key('F2', { altKey: true })).toBeNull();
    expect(key('x')).toBeNull();
  });
});
