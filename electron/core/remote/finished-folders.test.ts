import { describe, expect, it } from 'vitest';
import { FinishedFolders } from './finished-folders.js';

describe('FinishedFolders', () => {
  it('hands out a folder once the entries moved past it and its last file ended, with the files written', () => {
    const folders = new FinishedFolders<string>();
    folders.starting('/a');
    folders.starting('/a');
    folders.ended('/a', 'a1');
    expect(folders.takeFinished()).toEqual([]); // the entries may still bring more of /a
    folders.starting('/b');
    expect(folders.takeFinished()).toEqual([]); // a file of /a is still under way
    folders.ended('/a', 'a2');
    expect(folders.takeFinished()).toEqual([{ folder: '/a', files: ['a1', 'a2'] }]);
    expect(folders.takeFinished()).toEqual([]);
    folders.ended('/b', 'b1');
    expect(folders.takeFinished()).toEqual([]); // /b is where the entries are
  });

  it('leaves out files not written, and a folder with none', () => {
    const folders = new FinishedFolders<string>();
    folders.starting('/a');
    folders.starting('/a');
    folders.ended('/a', null);
    folders.ended('/a', 'a2');
    folders.starting('/b');
    folders.ended('/b', null);
    folders.starting('/c');
    expect(folders.takeFinished()).toEqual([{ folder: '/a', files: ['a2'] }]);
  });

  it('never hands out a folder the entries come back to, nor what it had ended before', () => {
    const folders = new FinishedFolders<string>();
    folders.starting('/a');
    folders.starting('/b');
    folders.starting('/a');
    folders.ended('/a', 'a1');
    folders.ended('/a', 'a2');
    folders.ended('/b', 'b1');
    folders.starting('/c');
    expect(folders.takeFinished()).toEqual([{ folder: '/b', files: ['b1'] }]);
  });

  it('hands out each file once: what a folder had handed out is not in a later batch', () => {
    const folders = new FinishedFolders<string>();
    folders.starting('/a');
    folders.ended('/a', 'a1');
    folders.starting('/b');
    expect(folders.takeFinished()).toEqual([{ folder: '/a', files: ['a1'] }]);
    folders.starting('/a'); // back to /a: scattered from here on
    folders.ended('/a', 'a2');
    folders.starting('/c');
    expect(folders.takeFinished()).toEqual([]);
  });
});
