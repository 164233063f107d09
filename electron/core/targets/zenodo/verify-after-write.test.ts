// Verify after write against Zenodo's own record (issue #18 part 3): the emulator stores one
// file's bytes damaged and, like Zenodo, answers the checksum of what it stored at the commit;
// that file must be removed again and failed with a sentence, and the others verified.
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { isFinishedStatus, type Job } from '../../../../shared/api.js';
import { makeConfig } from '../../config.js';
import { registerTransferExecutors } from '../../jobs/executors.js';
import { createJobService } from '../../jobs/service.js';
import { MemoryTarget } from '../../jobs/test-support/memory-target.js';
import type { JobService } from '../../jobs/types.js';
import { MemorySecretStore } from '../../keychain/memory.js';
import { DEFAULT_LIMITS } from '../../limits.js';
import { TargetRegistry } from '../../registry.js';
import { startZenodoEmulator, type ZenodoEmulator } from '../../../../test/emulators/zenodo/emulator.js';
import { recordId } from '../invenio/ids.js';
import { createZenodoTarget } from './index.js';

const ACCESS_KEY = 'c'.repeat(64);
let dir: string;
let emulator: ZenodoEmulator;
let jobs: JobService;

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-zenodo-verify-'));
  emulator = await startZenodoEmulator();
  const config = makeConfig({ dataDir: '/nonexistent', remotes: { osfApiUrl: '', githubApiUrl: '', gitlabUrl: '', figshareApiUrl: '', zenodoUrl: emulator.url } });
  const secrets = new MemorySecretStore();
  const registry = new TargetRegistry();
  registry.register(new MemoryTarget({ name: 'src', files: { 'Data/a.txt': 'alpha', 'Data/b.txt': 'beta!' } }));
  registry.register(createZenodoTarget(config, secrets, { ratePerSecond: 1000, retries: 2 }));
  jobs = createJobService({ dir: path.join(dir, 'jobs'), concurrency: 1, retentionMs: 3_600_000, accessKey: ACCESS_KEY });
  registerTransferExecutors(jobs, { targets: registry, secrets, limits: DEFAULT_LIMITS, accessKey: ACCESS_KEY });
  await jobs.start();
});

afterEach(async () => {
  await jobs.close();
  await emulator.close();
  await rm(dir, { recursive: true, force: true });
});

async function transferInto(record: string): Promise<Job> {
  const source = { target: 'src', resource_id: MemoryTarget.idOf('Data') };
  const containerId = recordId(record);
  const job = await jobs.submit({
    kind: 'transfer',
    target: 'zenodo',
    resource_id: containerId,
    source,
    params: { source: { target: 'src', resourceId: source.resource_id }, containerId, duplicateAction: 'ignore' },
    tokens: { source: 'src-token', destination: 'zenodo-token' },
  });
  const deadline = Date.now() + 20_000;
  for (;;) {
    const current = jobs.get(job.ticket_number)!;
    if (isFinishedStatus(current.status)) return current;
    if (Date.now() > deadline) throw new Error(`job still ${current.status}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

it('a file Zenodo stored with a checksum other than the bytes sent is removed again and failed, with a sentence; the rest verified', async () => {
  const record = emulator.state.addRecord(1, 'Target');
  emulator.state.damageOnStore.add('Data__b.txt');
  const done = await transferInto(record.id);
  // the damaged copy is not left on the record (remote/advertised-fixity.ts, at the commit's answer)
  expect(emulator.state.records.get(record.id)!.files.map((file) => file.key).sort()).toEqual(['Data__a.txt', 'Data__ferry-provenance.json']);
  expect(done.status).toBe('completed_with_errors');
  expect(done.report?.resources_created).toEqual(['Data/a.txt']);
  const sent = createHash('md5').update('beta!').digest('hex');
  const stored = createHash('md5').update(Buffer.from([...Buffer.from('beta!')].map((byte, i) => (i === 0 ? byte ^ 0xff : byte)))).digest('hex');
  expect(done.report?.failed_files).toEqual([
    {
      path: 'Data/b.txt',
      stage: 'write',
      error: `Zenodo stored 'Data__b.txt' with MD5 ${stored}, but Ferry sent ${sent}; the file was removed again. Try again.`,
    },
  ]);
  expect(done.report?.written_checks?.map((check) => [check.path, check.result])).toEqual([['Data/a.txt', 'verified']]);
});
