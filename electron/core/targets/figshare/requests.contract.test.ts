// "What Ferry sends" to figshare: the requests of a listing, a download, an upload into an
// item and a new top-level upload, recorded by the emulator at Ferry's default rate (one a
// second), each checked against docs/targets/figshare.md.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeConfig } from '../../config.js';
import { MemorySecretStore } from '../../keychain/memory.js';
import { startFigshareEmulator, type FigshareEmulator, type FigshareExchange } from '../../../../test/emulators/figshare/emulator.js';
import { busiestWindow, evidenceRows, withoutEvidence } from '../../../../test/emulators/shared/evidence-table.js';
import { collect, ctx, drain, entriesFrom, writeOptions } from '../../../../test/target-suite/test-entries.js';
import { createFigshareTarget } from './index.js';

/** The real host each emulator server stands for, as docs/targets/figshare.md writes it. */
const HOSTS: Record<FigshareExchange['host'], string> = {
  api: 'api.figshare.com',
  upload: 'fup-<region>.figshare.com',
  s3: '<s3>',
  download: 'ndownloader.figshare.com',
  elsewhere: 'somewhere-else.example',
};
let emulator: FigshareEmulator;
let sent: FigshareExchange[] = [];

beforeAll(async () => {
  emulator = await startFigshareEmulator({ partSize: 4, processingReads: 0 });
  const project = emulator.state.addProject(1, 'Project');
  const inProject = emulator.state.addArticle(1, 'In project', project.id, { 'p.txt': 'project bytes' });
  const loose = emulator.state.addArticle(1, 'Loose', null, { 'a.txt': 'loose bytes' });
  emulator.state.addLinkFile(loose, 'link.csv', `${emulator.elsewhereUrl}/link.csv`);
  // Ferry's defaults (figshare/api.ts: one request a second), pointed at the emulator's hosts
  const config = makeConfig({ dataDir: '/nonexistent', remotes: { ...makeConfig().remotes, figshareApiUrl: emulator.url } });
  const target = createFigshareTarget(config, new MemorySecretStore(), { downloadUrl: emulator.downloadUrl });
  const c = ctx('figshare-token');

  await collect(target.list(c, { container: null }));
  await collect(target.list(c, { container: `p${project.id}` }));
  await drain((await target.read(c, `a${loose.id}`)).entries);
  await drain((await target.read(c, `p${project.id}_f${inProject.id}_${inProject.files[0]!.id}`)).entries);
  await target.write(c, `a${loose.id}`, entriesFrom({ 'up.txt': 'up bytes' }), writeOptions('ignore'));
  await target.write(c, null, entriesFrom({ 'Top/': null, 'Top/x.txt': 'x bytes' }), writeOptions('ignore'));
  sent = [...emulator.state.exchanges];
}, 120_000);
afterAll(() => emulator?.close());

describe('What Ferry sends to figshare', () => {
  it('every request has a row of evidence in docs/targets/figshare.md', () => {
    expect(sent.length).toBeGreaterThan(15);
    expect(withoutEvidence(evidenceRows('figshare'), sent.map((r) => ({ method: r.method, host: HOSTS[r.host], path: r.path })))).toEqual([]);
  });

  it("sends the token to figshare's API and download hosts only: never to the upload host, S3 or another host", () => {
    const credentialed = sent.filter((r) => r.credential);
    expect(new Set(credentialed.map((r) => r.host))).toEqual(new Set(['api', 'download']));
    expect(sent.filter((r) => r.host === 'elsewhere')).toEqual([]);
    expect(sent.filter((r) => r.host === 's3').length).toBeGreaterThanOrEqual(2);
    // the token travels in a URL only to the download host (as ?token=)
    expect(sent.filter((r) => /token=/.test(r.query) && r.host !== 'download')).toEqual([]);
  });

  it('reads a project item through the project routes', () => {
    expect(sent.some((r) => /^\/v2\/account\/projects\/\d+\/articles\/\d+\/files\/\d+$/.test(r.path))).toBe(true);
  });

  it("stays within figshare's one request a second across its hosts (the S3 hop is not figshare's)", () => {
    const figshare = sent.filter((r) => r.host === 'api' || r.host === 'upload' || r.host === 'download');
    expect(busiestWindow(figshare.map((r) => r.at))).toBeLessThanOrEqual(1);
  });
});
