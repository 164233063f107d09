import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { makeConfig } from '../../config.js';
import { MemorySecretStore } from '../../keychain/memory.js';
import type { Entry, Target, TargetContext } from '../../target.js';
import { startOsfEmulator, type OsfEmulator, type OsfEmulatorOptions } from '../../../../test/emulators/osf/emulator.js';
import { md5 } from '../../../../test/target-suite/test-entries.js';
import { createOsfTarget } from './index.js';

export { collect, md5, readAll, writeOptions } from '../../../../test/target-suite/test-entries.js';

/** Test wiring: an OSF emulator with one user and a target pointed at it. */
export interface OsfFixture {
  emu: OsfEmulator;
  target: Target;
  userId: string;
  token: string;
  ctx: TargetContext;
}

export async function osfFixture(options: OsfEmulatorOptions = {}): Promise<OsfFixture> {
  const emu = await startOsfEmulator(options);
  const user = emu.state.addUser('Test Researcher');
  const token = emu.state.addToken(user.id);
  const config = makeConfig({ dataDir: '/nonexistent', workspace: '/nonexistent', remotes: { osfApiUrl: emu.apiUrl, githubApiUrl: '', gitlabUrl: '', zenodoUrl: '', figshareApiUrl: '' } });
  // A brisk rate keeps tests short; the default is 5 requests per second.
  const target = createOsfTarget(config, new MemorySecretStore(), { ratePerSecond: 200, retries: 3 });
  return { emu, target, userId: user.id, token, ctx: { token, signal: new AbortController().signal } };
}

export const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');

export interface EntrySpec {
  path: string;
  content?: string;
  /** tell the writer the md5 up front (as a ZIP with a manifest would) */
  knownMd5?: boolean;
  /** size unknown (as a stream of unknown length) */
  unknownSize?: boolean;
  onOpen?: () => void;
}

export function entries(specs: EntrySpec[]): AsyncIterable<Entry> {
  return (async function* (): AsyncGenerator<Entry> {
    for (const spec of specs) {
      if (spec.content === undefined) {
        yield { path: spec.path, kind: 'folder', size: null, mtime: null, hashes: {}, open: () => Promise.reject(new Error('folder')) };
        continue;
      }
      const bytes = Buffer.from(spec.content);
      yield {
        path: spec.path,
        kind: 'file',
        size: spec.unknownSize ? null : bytes.length,
        mtime: null,
        hashes: spec.knownMd5 ? { md5: md5(bytes) } : ({} as Record<string, string>),
        open: async () => {
          spec.onOpen?.();
          return Readable.from([bytes]);
        },
      };
    }
  })();
}
