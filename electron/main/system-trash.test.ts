import { describe, expect, it } from 'vitest';
import { systemTrash } from './system-trash.js';

describe('systemTrash (the Electron adapter, with a fake shell)', () => {
  it("hands the path to shell.trashItem and says it went to the system's trash", async () => {
    const calls: string[] = [];
    const trash = systemTrash({ trashItem: async (p) => void calls.push(p) });
    expect(await trash.put('/home/u/Ferry/Data/a.txt', { target: 'local', path: 'Data/a.txt', kind: 'file' })).toEqual({ kind: 'system_trash' });
    expect(calls).toEqual(['/home/u/Ferry/Data/a.txt']);
  });

  it("turns the shell's refusal into a sentence naming the workspace path, never the machine's", async () => {
    const trash = systemTrash({ trashItem: () => Promise.reject(new Error('Failed to move /home/u/Ferry/Data/a.txt to trash')) });
    const error = (await trash.put('/home/u/Ferry/Data/a.txt', { target: 'local', path: 'Data/a.txt', kind: 'file' }).then(() => null, (e: unknown) => e)) as Error;
    expect(error.message).toMatch(/^The system's trash did not take 'Data\/a\.txt', so nothing was deleted\./);
    expect(error.message).not.toContain('/home/u');
  });
});
