import { existsSync } from 'node:fs';
import { describe, it } from 'vitest';
import { startGithubEmulator } from '../../../../test/emulators/github/server.js';
import { makeConfig } from '../../config.js';
import { MemorySecretStore } from '../../keychain/memory.js';
import { encodeForgeId } from '../forge/ids.js';
import { createGithubTarget } from './index.js';

// The shared Target contract suite (written by another helper); run it once it exists.
const suite = new URL('../../../../test/target-suite/target-contract.ts', import.meta.url);

async function setup() {
  const emu = await startGithubEmulator();
  const user = { id: 1, login: 'contract' };
  emu.state.tokens.set('ghp_contract', user);
  const repo = emu.state.addRepo(user, 'contract-repo', { 'sample.txt': 'sample bytes\n', 'folder/inner.txt': 'inner' });
  const target = createGithubTarget(makeConfig({ remotes: { ...makeConfig().remotes, githubApiUrl: emu.url } }), new MemorySecretStore(), { writeSpacingMs: 0, maxRateWaitMs: 2000 });
  return {
    target,
    token: 'ghp_contract',
    badToken: 'ghp_invalid',
    writableContainerId: encodeForgeId('r', repo.id),
    sampleFileId: encodeForgeId('r', repo.id, 'sample.txt'),
    missingId: encodeForgeId('r', repo.id, 'no-such-file.txt'),
    teardown: () => emu.close(),
  };
}

if (existsSync(suite)) {
  const { describeTargetContract } = (await import(suite.href)) as { describeTargetContract: (name: string, s: typeof setup) => void };
  describeTargetContract('github', setup);
} else {
  describe('github: shared Target contract', () => {
    it.skip('test/target-suite/target-contract.ts does not exist yet; the contract suite runs once it lands', () => {});
  });
}
