import { describe, expect, it } from 'vitest';
import { FolderLanes } from './folder-lanes.js';

describe('folder lanes (which worker makes a folder\'s new files)', () => {
  it('keeps a folder on its worker while any of its files is under way, then lets it go', () => {
    const lanes = new FolderLanes<string>();
    let next = 'A';
    const leastBusy = () => next;
    expect(lanes.take('data/site-00', leastBusy)).toBe('A');
    next = 'B';
    // the least busy worker is now B, but site-00 has a file under way on A
    expect(lanes.take('data/site-00', leastBusy)).toBe('A');
    // another folder goes to the least busy worker
    expect(lanes.take('data/site-01', leastBusy)).toBe('B');
    expect(lanes.size).toBe(2);
    lanes.done('data/site-00');
    expect(lanes.take('data/site-00', leastBusy)).toBe('A');
    lanes.done('data/site-00');
    lanes.done('data/site-00');
    // none of site-00's files under way: it goes wherever is least busy now
    expect(lanes.size).toBe(1);
    expect(lanes.take('data/site-00', leastBusy)).toBe('B');
  });

  it('asks for the least busy worker only when a folder starts a lane', () => {
    const lanes = new FolderLanes<number>();
    let asked = 0;
    const leastBusy = () => ++asked;
    for (let i = 0; i < 5; i++) lanes.take('one', leastBusy);
    expect(asked).toBe(1);
    // a done for a folder never taken changes nothing
    lanes.done('other');
    expect(lanes.size).toBe(1);
  });
});
