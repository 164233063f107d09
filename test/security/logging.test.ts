// The error log: an unexpected failure is logged (the 500 says so), and never holds a
// credential: not from headers (pino redaction), and not from an unexpected error whose
// message or stack quotes the token (a URL with ?token=, a service echoing it).
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { fullActions, type Target } from '../../electron/core/target.js';
import { expectApiError, startFerry, type Ferry } from '../api/harness.js';

const TOKEN = 'remote-token-abcdef0123456789';
const quoting: Target = {
  info: { name: 'quoting', readable_name: 'Quoting', supported_actions: fullActions(false), supported_hash_algorithms: [], credential: 'remote' },
  list: (ctx) => ({
    [Symbol.asyncIterator]: () => ({
      next: () => Promise.reject(new Error(`fetch https://files.example/x?token=${ctx.token}&a=1 failed; header was "Bearer ${ctx.token}"`)),
    }),
  }),
  detail: async (ctx) => {
    throw new Error(`detail failed for ${ctx.token}`);
  },
  read: async () => {
    throw new Error('not used');
  },
  write: async () => {
    throw new Error('not used');
  },
};

const failing: Target = {
  info: { name: 'failing', readable_name: 'Failing', supported_actions: fullActions(false), supported_hash_algorithms: [], credential: 'remote' },
  list: () => ({
    [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(new Error('socket hang up while talking to the service')) }),
  }),
  detail: async () => {
    throw new Error('not used');
  },
  read: async () => {
    throw new Error('not used');
  },
  write: async () => {
    throw new Error('not used');
  },
};

let ferry: Ferry;
let log = '';
beforeAll(async () => {
  const stream = new PassThrough();
  stream.on('data', (chunk: Buffer) => (log += chunk.toString('utf8')));
  ferry = await startFerry({ targets: () => [failing, quoting], server: { logger: true, logStream: stream } });
  await ferry.core.secrets.set('token:quoting', TOKEN);
});
afterAll(async () => ferry?.close());

it('logs the failure but not the token it quotes, sent in a header or taken from the keychain', async () => {
  await expectApiError(await ferry.fetch('/api_v1/targets/quoting/resources/', { headers: { 'service-source-token': TOKEN } }), 500, 'internal_error');
  await expectApiError(await ferry.fetch('/api_v1/targets/quoting/resources/x.json/', { headers: { 'service-source-token': TOKEN } }), 500, 'internal_error');
  // the stored token, reached through the access key
  await expectApiError(await ferry.fetch('/api_v1/targets/quoting/resources/', { headers: ferry.bearer() }), 500, 'internal_error');
  await new Promise((resolve) => setTimeout(resolve, 50));
  expect(log).toContain('files.example');
  expect(log).toContain('detail failed');
  expect(log).not.toContain(TOKEN);
  expect(log).not.toContain(ferry.key);
});

it('logs unexpected errors, never the tokens that came with the request', async () => {
  const secret = 'remote-token-that-must-not-leak';
  await expectApiError(
    await ferry.fetch('/api_v1/targets/failing/resources/', { headers: { 'service-source-token': secret, 'service-destination-token': secret } }),
    500,
    'internal_error',
  );
  await expectApiError(await ferry.fetch('/api_v1/targets/failing/resources/', { headers: ferry.bearer() }), 401, 'unauthorized');
  await new Promise((resolve) => setTimeout(resolve, 50));
  expect(log).toContain('socket hang up');
  expect(log).not.toContain(secret);
  expect(log).not.toContain(ferry.key);
});
