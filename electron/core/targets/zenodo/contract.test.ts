import { describeTargetContract } from '../../../../test/target-suite/target-contract.js';
import { makeConfig } from '../../config.js';
import { MemorySecretStore } from '../../keychain/memory.js';
import { startZenodoEmulator } from '../../../../test/emulators/zenodo/emulator.js';
import { FOLDER_SEPARATOR, fileId, recordId } from '../invenio/index.js';
import { createZenodoTarget } from './index.js';

describeTargetContract('zenodo', async () => {
  const emulator = await startZenodoEmulator();
  const draft = emulator.state.addRecord(1, 'Contract draft', { 'sample.txt': 'sample bytes' });
  const config = makeConfig({ dataDir: '/nonexistent', remotes: { ...makeConfig().remotes, zenodoUrl: emulator.url } });
  return {
    target: createZenodoTarget(config, new MemorySecretStore(), { ratePerSecond: 1000, retries: 0 }),
    token: 'zenodo-token',
    badToken: 'not-a-zenodo-token',
    writableContainerId: recordId(draft.id),
    sampleFileId: fileId(draft.id, 'sample.txt'),
    missingId: fileId(draft.id, 'no-such-file.txt'),
    // Zenodo has no folders: a written a/b.txt is stored as the file a__b.txt.
    flatNamespace: { separator: FOLDER_SEPARATOR },
    teardown: () => emulator.close(),
  };
});
