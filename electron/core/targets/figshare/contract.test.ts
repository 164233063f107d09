import { existsSync } from 'node:fs';
import { describe, it } from 'vitest';
import { makeConfig } from '../../config.js';
import { MemorySecretStore } from '../../keychain/memory.js';
import { startFigshareEmulator } from '../../../../test/emulators/figshare/emulator.js';
import { createFigshareTarget } from './index.js';
import { FOLDER_SEPARATOR } from './figshare-target.js';

// The shared Target contract suite (test/target-suite/, another helper's) over the emulator.
const suite = new URL('../../../../test/target-suite/target-contract.ts', import.meta.url);
if (!existsSync(suite)) {
  console.warn('[figshare contract] test/target-suite/target-contract.ts does not exist yet; contract not run');
  describe('figshare Target contract', () => it.skip('needs test/target-suite/target-contract.ts', () => undefined));
} else {
  const { describeTargetContract } = (await import(suite.href)) as { describeTargetContract: (name: string, setup: () => Promise<unknown>) => void };
  describeTargetContract('figshare', async () => {
    const emulator = await startFigshareEmulator({ partSize: 64 * 1024, processingReads: 0 });
    const article = emulator.state.addArticle(1, 'Contract article', null, { 'sample.txt': 'sample bytes' });
    const config = makeConfig({ dataDir: '/nonexistent', remotes: { osfApiUrl: '', githubApiUrl: '', gitlabUrl: '', zenodoUrl: '', figshareApiUrl: emulator.url } });
    return {
      target: createFigshareTarget(config, new MemorySecretStore(), { ratePerSecond: 1000, retries: 0 }),
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
}
