// The emulator's legacy file links against the real published deposition quoted in
// zenodo-rdm issue #1196 (../shared/reference/recordings/zenodo/rdm-2025-published-deposition-files-excerpt.200.json).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recording } from '../shared/recordings.js';
import { startZenodoEmulator, type ZenodoEmulator } from './emulator.js';

interface LegacyFile {
  filename: string;
  links: { self: string; download: string };
}
const real = (JSON.parse(recording('zenodo', 'rdm-2025-published-deposition-files-excerpt.200.json').body) as { files: LegacyFile[] }).files[0]!;
/** a link with the host and ids taken out: what is left is its form */
const form = (link: string, id: string, fileId: string) => new URL(link).pathname.replace(id, '<id>').replace(fileId, '<file id>');

describe('zenodo emulator: file links of a published deposition, as recorded', () => {
  let emulator: ZenodoEmulator;
  beforeAll(async () => {
    emulator = await startZenodoEmulator();
  });
  afterAll(() => emulator.close());

  it('gives the /draft/ download link and the record-form self link', async () => {
    const published = emulator.state.addDeposition(1, 'Done', { [real.filename]: 'x' }, true);
    const body = (await (await fetch(`${emulator.url}/api/deposit/depositions/${published.id}`, { headers: { authorization: 'Bearer zenodo-token' } })).json()) as { files: (LegacyFile & { id: string })[] };
    const mine = body.files[0]!;
    const realId = /records\/(\d+)\//.exec(real.links.download)![1]!;
    const realFileId = (real as LegacyFile & { id: string }).id;
    expect(form(mine.links.download, String(published.id), mine.id)).toBe(form(real.links.download, realId, realFileId));
    expect(form(mine.links.self, String(published.id), mine.id)).toBe(form(real.links.self, realId, realFileId));
  });
});
