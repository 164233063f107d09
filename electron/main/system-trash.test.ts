import { describe, expect, it } from 'vitest';
import { systemTrash } from './system-trash.js';

describe('systemTrash (the Electron adapter, with a fake shell)', () => {
  it("hands the path to shell.trashItem and says it went to the system's trash", async () => {
    const calls: string[] = [];
    const trash = systemTrash({ trashItem: async (p) => void calls.push(p) });
    expect(await trash.put('/home/u/Ferry/Data/a.txt', { target: 'local', path: 'Data/a.txt', kind: 'file' })).toEqual({ kind: 'system_trash' });
    expect(calls).toEqual(['/home/u/Ferry/Data/a.txt']);
  });

  it("passes the shell's failure on, so nothing counts as deleted that was not", async () => {
    const trash = systemTrash({ trashItem: () => Promise.reject(Object.assign(new Error('no trash'), { code: 'EPERM' })) });
    await expect(trash.put('/x', { target: 'local', path: 'x', kind: 'file' })).rejects.toMatchObject({ code: 'EPERM' });
  });
});
