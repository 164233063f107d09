import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job, ResourceSummary } from '../../shared/api.js';
import { makeConfig } from '../../electron/core/config.js';
import { createCore } from '../../electron/core/ferry-core.js';
import { MemorySecretStore } from '../../electron/core/keychain/memory.js';
import { LocalTarget } from '../../electron/core/targets/local/local-target.js';
import { createOfflineTarget } from '../../electron/core/targets/offline/index.js';
import { findRclone, startRcloneEngine, type RcloneEngine } from '../../electron/core/targets/rclone/index.js';
import { rcloneUnavailableReason, sshdUnavailableReason, startS3Server, startSftpServer, writeRcloneConfig, type S3Server, type SftpServer } from '../rclone/servers.js';
import { run, startFerry, unzipTo, waitForJob, type Ferry } from './harness.js';

// rclone remotes through the API, as the panes use them, against real servers on loopback:
// a folder goes local → SFTP (OpenSSH) → S3 (s3rver) → the offline library, and arrives with
// every checksum verified on the way.

const skip = rcloneUnavailableReason() ?? sshdUnavailableReason();
const md5 = (bytes: Buffer) => createHash('md5').update(bytes).digest('hex');

if (skip) {
  console.warn(`[rclone api] not run: ${skip}`);
  describe('rclone remotes through the API', () => it.skip(`not run: ${skip}`, () => undefined));
} else {
  let dir: string;
  let sftp: SftpServer;
  let s3: S3Server;
  let engine: RcloneEngine;
  let ferry: Ferry;
  let configPath: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-rclone-api-'));
    sftp = await startSftpServer();
    s3 = await startS3Server();
    configPath = await writeRcloneConfig(dir, {
      'hpc-login': { type: 'sftp', host: '127.0.0.1', port: String(sftp.port), user: sftp.user, key_file: sftp.keyFile, shell_type: 'unix', md5sum_command: 'md5sum', sha1sum_command: 'sha1sum' },
      hpc: { type: 'alias', remote: `hpc-login:${sftp.root}` },
      store: { type: 's3', provider: 'Other', endpoint: s3.endpoint, access_key_id: s3.accessKeyId, secret_access_key: s3.secretAccessKey, force_path_style: 'true' },
    });
    // see contract.test.ts: rclone 1.60's S3 client fails on AWS_CA_BUNDLE
    const { AWS_CA_BUNDLE: _ignored, ...env } = process.env;
    engine = await startRcloneEngine({ engine: 'local', binary: findRclone()!, configPath, env });
    const remotes = await engine.targets();
    ferry = await startFerry({
      targets: (config, secrets) => [new LocalTarget({ root: config.workspace }), createOfflineTarget(config, secrets), ...remotes],
    });
  });

  afterAll(async () => {
    await ferry?.close();
    await engine?.stop();
    await sftp?.stop();
    await s3?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const list = async (target: string, container?: string): Promise<ResourceSummary[]> => {
    const query = container === undefined ? '' : `?container=${encodeURIComponent(container)}`;
    const response = await ferry.fetch(`/api_v1/targets/${target}/resources/${query}`, { headers: ferry.bearer() });
    expect(response.status, await response.clone().text()).toBe(200);
    return (await response.json()) as ResourceSummary[];
  };

  const transfer = async (destination: string, containerId: string | null, sourceTarget: string, sourceId: string): Promise<Job> => {
    const response = await ferry.fetch(`/api_v1/targets/${destination}/resources/${containerId ? `${encodeURIComponent(containerId)}/` : ''}`, {
      method: 'POST',
      headers: ferry.bearer({ 'content-type': 'application/json', 'duplicate-file-action': 'update' }),
      body: JSON.stringify({ source_target_name: sourceTarget, source_resource_id: sourceId }),
    });
    expect(response.status, await response.clone().text()).toBe(202);
    const { ticket_number: ticket } = (await response.json()) as { ticket_number: string };
    return waitForJob(ferry, ticket, 60_000);
  };

  describe('rclone remotes through the API', () => {
    it('lists each rclone remote as a target of its own, saying it runs on rclone', async () => {
      const targets = (await (await ferry.fetch('/api_v1/targets/')).json()) as { name: string; readable_name: string; supported_hash_algorithms: string[] }[];
      const hpc = targets.find((target) => target.name === 'rclone-hpc');
      const store = targets.find((target) => target.name === 'rclone-store');
      expect(hpc?.readable_name).toBe('hpc (rclone alias)');
      expect(store?.readable_name).toBe('store (rclone s3)');
      expect(store?.supported_hash_algorithms).toEqual(['md5']);
    });

    it('local → SFTP → S3 → offline library: every file arrives with every checksum verified', async () => {
      const files: Record<string, Buffer> = {
        'Run 7/summary.csv': Buffer.from('run,score\n7,0.93\n'),
        'Run 7/raw/frame #1.bin': Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 7) % 256)),
        'Run 7/raw/notes ü.txt': Buffer.from('unicode names travel too\n'),
      };
      for (const [relative, bytes] of Object.entries(files)) {
        await mkdir(path.dirname(path.join(ferry.workspace, relative)), { recursive: true });
        await writeFile(path.join(ferry.workspace, relative), bytes);
      }
      const run7 = (await list('local', 'None')).find((node) => node.title === 'Run 7')!;

      const toSftp = await transfer('rclone-hpc', null, 'local', run7.id);
      expect(toSftp.status, toSftp.error ?? '').toBe('succeeded');
      expect(toSftp.report?.new_resource?.title).toBe('Run 7');
      expect(toSftp.report?.failed_fixity).toEqual([]);
      expect(await readFile(path.join(sftp.root, 'Run 7', 'raw', 'frame #1.bin'))).toEqual(files['Run 7/raw/frame #1.bin']);
      // no temporary of Ferry's is left behind
      expect((await readdir(path.join(sftp.root, 'Run 7', 'raw'))).sort()).toEqual(['frame #1.bin', 'notes ü.txt']);

      const onSftp = (await list('rclone-hpc', 'None')).find((node) => node.title === 'Run 7')!;
      const bucket = (await list('rclone-store', 'None')).find((node) => node.title === s3.bucket)!;
      const toS3 = await transfer('rclone-store', bucket.id, 'rclone-hpc', onSftp.id);
      expect(toS3.status, toS3.error ?? '').toBe('succeeded');
      expect(toS3.report?.failed_fixity).toEqual([]);
      // the provenance record the first hop wrote travels with the data
      expect(toS3.report?.resources_created.sort()).toEqual(['Run 7', 'Run 7/ferry-provenance.json', 'Run 7/raw', 'Run 7/raw/frame #1.bin', 'Run 7/raw/notes ü.txt', 'Run 7/summary.csv']);

      // S3's own md5 of each object, as the detail shows it
      const inBucket = await list('rclone-store');
      for (const [relative, bytes] of Object.entries(files)) {
        const node = inBucket.find((candidate) => candidate.kind === 'item' && candidate.title === path.basename(relative))!;
        const detail = (await (await ferry.fetch(`/api_v1/targets/rclone-store/resources/${node.id}.json/`, { headers: ferry.bearer() })).json()) as { hashes: Record<string, string> };
        expect(detail.hashes.md5).toBe(md5(bytes));
      }

      // into the offline library: a bag whose provenance compares S3's md5 with the bytes read
      const onS3 = (await list('rclone-store', bucket.id)).find((node) => node.title === 'Run 7')!;
      const download = await ferry.fetch(`/api_v1/targets/rclone-store/resources/${onS3.id}.zip/?keep=1`, { headers: ferry.bearer() });
      expect(download.status).toBe(200);
      const zip = path.join(dir, 'run7.zip');
      await writeFile(zip, Buffer.from(await download.arrayBuffer()));
      await run('unzip', ['-t', '-q', zip]);
      const out = path.join(dir, 'unzipped');
      await unzipTo(zip, out);
      const [bagFolder] = await readdir(out);
      const provenance = (JSON.parse(await readFile(path.join(out, bagFolder!, 'ferry-provenance.json'), 'utf8')) as { entries: { files: { path: string; fixity: string }[] }[] }).entries[0]!;
      // the data, and the transfers' provenance record that came along with it
      expect(provenance.files.map((file) => [file.path.split('/').pop(), file.fixity]).filter(([name]) => name !== 'ferry-provenance.json').map(([, fixity]) => fixity)).toEqual(['ok', 'ok', 'ok']);

      let archive: ResourceSummary | undefined;
      for (let attempt = 0; attempt < 50 && !archive; attempt++) {
        archive = (await list('offline', 'None')).find((node) => node.title === 'Run 7');
        if (!archive) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(archive, 'the kept copy appears in the offline library').toBeDefined();
      const verify = await ferry.fetch(`/api_v1/targets/offline/resources/${archive!.id}/verify/`, { method: 'POST', headers: ferry.auth() });
      expect(verify.status).toBe(202);
      const verified = await waitForJob(ferry, ((await verify.json()) as { ticket_number: string }).ticket_number, 60_000);
      expect(verified.status, verified.error ?? '').toBe('succeeded');
      expect(verified.report?.failed_fixity).toEqual([]);
      expect(verified.report?.verified?.length).toBeGreaterThanOrEqual(3);
    });

    it('Ferry starts its own engine from the config and stops it with the core', async () => {
      const { AWS_CA_BUNDLE: _ignored, ...env } = process.env;
      const root = await mkdtemp(path.join(os.tmpdir(), 'ferry-rclone-core-'));
      const core = await createCore(makeConfig({ dataDir: path.join(root, 'data'), workspace: path.join(root, 'ws'), rclone: { engine: 'local', binary: findRclone()!, configPath, env } }), {
        secrets: new MemorySecretStore(),
        targets: () => [],
      });
      try {
        expect(core.targets.all().map((target) => target.info.name).sort()).toEqual(['rclone-hpc', 'rclone-hpc-login', 'rclone-store']);
        const nodes = [];
        for await (const node of core.targets.get('rclone-hpc').list({ token: core.accessKey, signal: new AbortController().signal }, { container: null })) nodes.push(node);
        expect(Array.isArray(nodes)).toBe(true);
      } finally {
        await core.close();
        await rm(root, { recursive: true, force: true });
      }
    });

    it('keeps the engine\'s password off its command line, where every local user could read it', async () => {
      const pids = (await readdir('/proc')).filter((name) => /^\d+$/.test(name));
      let seen = 0;
      for (const pid of pids) {
        const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
        if (!cmdline.includes('rcd\0--rc-addr')) continue;
        seen++;
        expect(cmdline).not.toMatch(/--rc-pass|--rc-user/);
      }
      expect(seen).toBeGreaterThan(0);
    });
  });
}
