import { describeTargetContract } from '../../../../test/target-suite/target-contract.js';
import { makeConfig } from '../../config.js';
import { MemorySecretStore } from '../../keychain/memory.js';
import { startInvenioEmulator } from '../../../../test/emulators/invenio/emulator.js';
import { createInvenioTarget } from './index.js';
import { fileId, recordId } from './ids.js';
import { FOLDER_SEPARATOR } from './invenio-target.js';

describeTargetContract('invenio', async () => {
  const emulator = await startInvenioEmulator();
  const draft = emulator.state.addRecord(1, 'Contract draft', { 'sample.txt': 'sample bytes' });
  emulator.state.addRecord(1, 'Published record', { 'published.txt': 'published bytes' }, { published: true });
  return {
    target: createInvenioTarget(makeConfig({ dataDir: '/nonexistent' }), new MemorySecretStore(), { defaultUrl: emulator.url, ratePerSecond: 1000, retries: 0 }),
    token: 'invenio-token',
    badToken: 'not-an-invenio-token',
    writableContainerId: recordId(draft.id),
    sampleFileId: fileId(draft.id, 'sample.txt'),
    missingId: fileId(draft.id, 'no-such-file.txt'),
    // InvenioRDM records have no folders: a written a/b.txt is stored as the file a__b.txt.
    flatNamespace: { separator: FOLDER_SEPARATOR },
    teardown: () => emulator.close(),
  };
});
