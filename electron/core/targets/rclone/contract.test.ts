import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'vitest';
import { describeTargetContract, type TargetFixture } from '../../../../test/target-suite/target-contract.js';
import {
  obscure,
  rcloneUnavailableReason,
  sshdUnavailableReason,
  startS3Server,
  startSftpServer,
  writeRcloneConfig,
  type RunningServer,
} from '../../../../test/rclone/servers.js';
import { startRcloneWebdav } from '../../../../test/webdav/rclone-webdav.js';
import { findRclone, rcloneId, startRcloneEngine } from './index.js';

// The shared target suite against rclone remotes backed by real servers on loopback: the
// local backend, OpenSSH's SFTP, `rclone serve webdav` and s3rver's S3. Each fixture starts
// Ferry's own rclone engine (rclone rcd) on a config file naming that one remote.

interface RemoteSetup {
  /** the rclone config section of the remote */
  options: Record<string, string>;
  /** folder on disk that holds what the remote serves at the place the suite uses */
  seed: string;
  /** the remote path (below "<remote>:") that `seed` is */
  place: string;
  server: RunningServer | null;
  /** remotes the one under test stands on (an alias's) */
  under?: Record<string, Record<string, string>>;
  /** the remote keeps its bytes in a layout of its own (S3): `seed` is copied in through rclone */
  seedThroughRclone?: boolean;
}

async function fixtureFor(name: string, setup: () => Promise<RemoteSetup>): Promise<TargetFixture> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-rclone-test-'));
  const remote = await setup();
  await mkdir(path.join(remote.seed, 'Writable'), { recursive: true });
  await writeFile(path.join(remote.seed, 'Writable', '.keep'), '');
  await writeFile(path.join(remote.seed, 'sample.txt'), 'sample bytes');
  const configPath = await writeRcloneConfig(dir, { ...remote.under, [name]: remote.options });
  // rclone 1.60's S3 client fails on AWS_CA_BUNDLE ("LoadCustomCABundleError ... transport
  // unsupported type"), which some machines set for other tools; these servers are plain HTTP
  const { AWS_CA_BUNDLE: _unused, ...env } = process.env;
  const engine = await startRcloneEngine({ engine: 'local', binary: findRclone()!, configPath, env });
  if (remote.seedThroughRclone) await engine.client.call('sync/copy', { srcFs: remote.seed, dstFs: `${name}:${remote.place}` });
  const target = (await engine.targets()).find((candidate) => candidate.info.name === `rclone-${name}`);
  if (!target) throw new Error(`rclone listed no remote from ${configPath}`);
  const at = (relative: string) => rcloneId(remote.place === '' ? relative : `${remote.place}/${relative}`);
  return {
    target,
    token: 'access-key-checked-by-the-caller',
    writableContainerId: at('Writable'),
    sampleFileId: at('sample.txt'),
    missingId: at('no-such-file.txt'),
    teardown: async () => {
      await engine.stop();
      await remote.server?.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

const noRclone = rcloneUnavailableReason();
if (noRclone) {
  console.warn(`[rclone contract] not run: ${noRclone}`);
  describe('rclone Target contract', () => it.skip(`not run: ${noRclone}`, () => undefined));
} else {
  describeTargetContract('rclone local', () =>
    fixtureFor('scratch', async () => {
      const folder = await mkdtemp(path.join(os.tmpdir(), 'ferry-rclone-local-'));
      return { options: { type: 'alias', remote: folder }, seed: folder, place: '', server: { stop: () => rm(folder, { recursive: true, force: true }) } };
    }),
  );

  const noSshd = sshdUnavailableReason();
  if (noSshd) {
    console.warn(`[rclone contract] SFTP not run: ${noSshd}`);
    describe('rclone sftp Target contract', () => it.skip(`not run: ${noSshd}`, () => undefined));
  } else {
    describeTargetContract('rclone sftp (OpenSSH)', () =>
      fixtureFor('hpc', async () => {
        const server = await startSftpServer();
        // the login's home holds far more than the test's files: the remote is an alias of one folder on it
        return {
          under: { 'hpc-login': { type: 'sftp', host: '127.0.0.1', port: String(server.port), user: server.user, key_file: server.keyFile, shell_type: 'unix', md5sum_command: 'md5sum', sha1sum_command: 'sha1sum' } },
          options: { type: 'alias', remote: `hpc-login:${server.root}` },
          seed: server.root,
          place: '',
          server,
        };
      }),
    );
  }

  describeTargetContract('rclone webdav (rclone serve webdav)', () =>
    fixtureFor('dav', async () => {
      const server = await startRcloneWebdav();
      return { options: { type: 'webdav', url: server.url, vendor: 'other', user: server.username, pass: await obscure(server.password) }, seed: server.dataDir, place: '', server };
    }),
  );

  describeTargetContract('rclone s3 (s3rver)', () =>
    fixtureFor('store', async () => {
      const server = await startS3Server();
      const seed = await mkdtemp(path.join(os.tmpdir(), 'ferry-s3-seed-'));
      return {
        options: { type: 's3', provider: 'Other', endpoint: server.endpoint, access_key_id: server.accessKeyId, secret_access_key: server.secretAccessKey, force_path_style: 'true' },
        // s3rver keeps objects in its own layout, so the seed goes in through rclone below
        seed,
        place: server.bucket,
        seedThroughRclone: true,
        server: {
          stop: async () => {
            await server.stop();
            await rm(seed, { recursive: true, force: true });
          },
        },
      };
    }),
  );
}
