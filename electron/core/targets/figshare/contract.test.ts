import { describeTargetContract } from '../../../../test/target-suite/target-contract.js';
import { makeConfig } from '../../config.js';
import { MemorySecretStore } from '../../keychain/memory.js';
import { startFigshareEmulator } from '../../../../test/emulators/figshare/emulator.js';
import { createFigshareTarget } from './index.js';
import { FOLDER_SEPARATOR } from './figshare-target.js';

describeTargetContract('figshare', async () => {
  const emulator = await startFigshareEmulator({ partSize: 64 * 1024, processingReads: 0 });
  const article = emulator.state.addArticle(1, 'Contract article', null, { 'sample.txt': 'sample bytes' });
  const config = makeConfig({ dataDir: '/nonexistent', remotes: { osfApiUrl: '', githubApiUrl: '', gitlabUrl: '', zenodoUrl: '', figshareApiUrl: emulator.url } });
  return {
    target: createFigshareTarget(config, new MemorySecretStore(), { ratePerSecond: 1000, retries: 0, downloadUrl: emulator.downloadUrl }),
    token: 'figshare-token',
    badToken: 'not-a-figshare-token',
    writableContainerId: `a${article.id}`,
    sampleFileId: `f${article.id}_${article.files[0]?.id}`,
    missingId: `a${article.id + 1000}`,
    // figshare items have no folders: a written a/b.txt is stored as the file a__b.txt.
    flatNamespace: { separator: FOLDER_SEPARATOR },
    teardown: () => emulator.close(),
  };
});
