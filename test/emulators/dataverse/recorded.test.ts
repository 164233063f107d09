import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { missingFrom } from '../zenodo/shape.js';
import { startDataverseEmulator, type DataverseEmulator } from './emulator.js';

const recorded = JSON.parse(readFileSync(new URL('./recorded/harvard-dataset-2022.json', import.meta.url), 'utf8')) as { body: { data: { latestVersion: { files: { dataFile: Record<string, unknown> }[] } } } };

/**
 * The emulator's version JSON carries every key (same JSON type) of a real Harvard Dataverse
 * answer (./recorded/). Documented differences: `description` (Ferry sends none), file
 * `persistentId`/`pidURL` (the emulator mints no file PIDs), `previousDataFileId` (only on a
 * replaced file), the 2022 `license: "NONE"` string (an object
 * since 5.10), `UNF` on a version, and `termsOfUse` (custom terms only).
 */
describe('dataverse emulator against a recorded Harvard Dataverse answer', () => {
  let emulator: DataverseEmulator;
  beforeAll(async () => {
    emulator = await startDataverseEmulator();
  });
  afterAll(() => emulator.close());

  it('a released version with an ingested and a plain file has the recorded shape', async () => {
    const d = emulator.state.addDataset(1, 'Recorded', { 'Karnataka_DD&FS_Questionnaire.pdf': 'pdf' }, { released: true });
    // an ingested file, as the add API would leave it
    const form = new FormData();
    form.append('jsonData', '{}');
    form.append('file', new Blob(['a,b\n1,2\n']), 'data.csv');
    expect((await fetch(`${emulator.url}/api/datasets/${d.id}/add`, { method: 'POST', headers: { 'x-dataverse-key': 'dv-token-1111' }, body: form })).status).toBe(200);
    d.released = { versionNumber: 2, files: d.draft!.files, releaseTime: d.draft!.lastUpdateTime };
    d.draft = null;
    const body = (await (await fetch(`${emulator.url}/api/datasets/${d.id}/versions/:latest`, { headers: { 'x-dataverse-key': 'dv-token-1111' } })).json()) as { data: { files: { dataFile: Record<string, unknown> }[] } };
    const ignore = [/description:/, /\.persistentId:/, /pidURL:/, /previousDataFileId:/, /^license/, /^UNF:/, /^termsOfUse/];
    // files are compared one by one below: the shape check reads only an array's first element
    expect(missingFrom(body.data, recorded.body.data.latestVersion, [...ignore, /^files\[\]/])).toEqual([]);
    const plain = body.data.files.find((f) => !f.dataFile.originalFileName)!.dataFile;
    expect(missingFrom(plain, recorded.body.data.latestVersion.files[1]!.dataFile, ignore)).toEqual([]);
    const ingested = body.data.files.find((f) => f.dataFile.originalFileName)!.dataFile;
    expect(missingFrom(ingested, recorded.body.data.latestVersion.files[0]!.dataFile, ignore)).toEqual([]);
    // the checksum covers the original, not the stored .tab
    expect(ingested.filename).toBe('data.tab');
    expect(ingested.originalFileName).toBe('data.csv');
  });
});
