// @vitest-environment node
// (jsdom's File has no stream(); Chromium's and Node's do, as client-zip needs)
import { describe, expect, it } from 'vitest';
import { newFolderPlan, zipStream } from './zip.js';

const f = (path: string, body = 'x') => ({ path, file: new File([body], path.split('/').pop()!) });

describe('zip body', () => {
  it('zips a plan as a real ZIP (local file headers, the folder entry)', async () => {
    const bytes = new Uint8Array(await zipStream(newFolderPlan('Fresh')).arrayBuffer());
    expect([...bytes.slice(0, 4)]).toEqual([0x50, 0x4b, 0x03, 0x04]);
    expect(new TextDecoder().decode(bytes)).toContain('Fresh/');
    const withFiles = new Uint8Array(
      await zipStream({ folder: null, files: [f('d/a.txt', 'hello')], emptyFolders: ['d/e'] }).arrayBuffer(),
    );
    const text = new TextDecoder().decode(withFiles);
    expect(text).toContain('d/a.txt');
    expect(text).toContain('d/e/');
    expect(text).toContain('hello');
  });
});
