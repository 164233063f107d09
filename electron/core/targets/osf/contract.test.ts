import { describeTargetContract } from '../../../../test/target-suite/target-contract.js';
import { startOsfEmulator } from '../../../../test/emulators/osf/emulator.js';
import { makeConfig } from '../../config.js';
import { MemorySecretStore } from '../../keychain/memory.js';
import { fileNodeId, storageId } from './ids.js';
import { createOsfTarget } from './index.js';

async function setup() {
  const emu = await startOsfEmulator();
  const user = emu.state.addUser('Contract User');
  const token = emu.state.addToken(user.id);
  const project = emu.state.addNode({ title: 'contract project', owner: user.id });
  const sample = emu.state.addFile(project.id, '/sample.txt', 'sample bytes\n');
  emu.state.addFile(project.id, '/folder/inner.txt', 'inner');
  const target = createOsfTarget(makeConfig({ remotes: { ...makeConfig().remotes, osfApiUrl: emu.apiUrl } }), new MemorySecretStore(), { ratePerSecond: 200, retries: 2 });
  return {
    target,
    token,
    badToken: 'not-an-osf-token',
    // A node's listed children are its storages and components; what is written into a
    // node lands in its osfstorage, so the storage is the container whose children show it.
    writableContainerId: storageId(project.id, 'osfstorage'),
    sampleFileId: fileNodeId(project.id, 'osfstorage', sample.id),
    missingId: fileNodeId(project.id, 'osfstorage', '0123456789abcdef01234567'),
    teardown: () => emu.close(),
  };
}

describeTargetContract('osf', setup);
