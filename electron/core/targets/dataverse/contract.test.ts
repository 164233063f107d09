import { describeTargetContract } from '../../../../test/target-suite/target-contract.js';
import { makeConfig } from '../../config.js';
import { MemorySecretStore } from '../../keychain/memory.js';
import { startDataverseEmulator } from '../../../../test/emulators/dataverse/emulator.js';
import { createDataverseTarget } from './index.js';
import { datasetId, fileId } from './ids.js';

describeTargetContract('dataverse', async () => {
  const emulator = await startDataverseEmulator();
  const draft = emulator.state.addDataset(1, 'Contract dataset', { 'sample.txt': 'sample bytes', 'raw/inner.txt': 'inner' });
  emulator.state.addDataset(1, 'Published dataset', { 'published.txt': 'published bytes' }, { released: true });
  return {
    target: createDataverseTarget(makeConfig({ dataDir: '/nonexistent' }), new MemorySecretStore(), { defaultUrl: emulator.url, ratePerSecond: 1000, retries: 0, journalDir: null }),
    token: 'dv-token-1111',
    badToken: 'not-a-dataverse-token',
    writableContainerId: datasetId(draft.id),
    sampleFileId: fileId(draft.id, draft.draft!.files[0]!.id),
    missingId: fileId(draft.id, 999_999),
    teardown: () => emulator.close(),
  };
});
