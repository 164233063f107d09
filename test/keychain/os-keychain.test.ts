import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeConfig } from '../../electron/core/config.js';
import { createCore } from '../../electron/core/ferry-core.js';
import { ACCESS_KEY_ACCOUNT, tokenAccount } from '../../electron/core/keychain/port.js';
import { OsSecretStore, openSecretStore } from '../../electron/core/keychain/os-keychain.js';

// These tests talk to a real Secret Service (gnome-keyring) on a D-Bus session bus.
// .ci/run provides one with dbus-run-session + gnome-keyring-daemon --unlock; see
// scripts/with-keyring.sh to run them by hand.
const SERVICE = `ferry-test-${process.pid}`;
const busReason = process.env.DBUS_SESSION_BUS_ADDRESS
  ? null
  : 'no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS unset); run under scripts/with-keyring.sh';
if (busReason) console.warn(`Keychain tests skipped: ${busReason}`);

function secretToolLookup(service: string, account: string): string | null {
  // An independent reader: libsecret's CLI, looking up what keyring-rs stored.
  const result = spawnSync('secret-tool', ['lookup', 'service', service, 'username', account], { encoding: 'utf8' });
  return result.status === 0 ? result.stdout : null;
}

describe.skipIf(busReason !== null)('OS keychain through a real gnome-keyring', () => {
  const store = new OsSecretStore(SERVICE);
  const dirs: string[] = [];

  afterAll(async () => {
    await store.delete(ACCESS_KEY_ACCOUNT);
    await store.delete(tokenAccount('osf'));
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  it('answers the probe, so Ferry uses it rather than memory', async () => {
    const opened = await openSecretStore(SERVICE);
    expect(opened.fallbackReason).toBeNull();
    expect(opened.store.persistent).toBe(true);
  });

  it('stores a secret, reads it back, and deletes it', async () => {
    const secret = randomBytes(16).toString('hex');
    await store.set(tokenAccount('osf'), secret);
    expect(await store.get(tokenAccount('osf'))).toBe(secret);
    const seenByLibsecret = secretToolLookup(SERVICE, tokenAccount('osf'));
    if (seenByLibsecret !== null) expect(seenByLibsecret.trim()).toBe(secret);
    expect(await store.delete(tokenAccount('osf'))).toBe(true);
    expect(await store.get(tokenAccount('osf'))).toBeNull();
  });

  it('keeps the access key in the keychain: a second core start gets the same key', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'ferry-kc-'));
    dirs.push(dataDir);
    const config = makeConfig({ dataDir, workspace: path.join(dataDir, 'ws') });
    const first = await createCore(config, { secrets: store, targets: () => [] });
    await first.close();
    expect(first.accessKey).toMatch(/^[0-9a-f]{64}$/);
    expect(await store.get(ACCESS_KEY_ACCOUNT)).toBe(first.accessKey);
    const second = await createCore(config, { secrets: new OsSecretStore(SERVICE), targets: () => [] });
    await second.close();
    expect(second.accessKey).toBe(first.accessKey);
  });
});
