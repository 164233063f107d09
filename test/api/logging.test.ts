// The error log: an unexpected failure is logged (the 500 says so) without any token or
// key from the request's headers.
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { fullActions, type Target } from '../../electron/core/target.js';
import { expectApiError, startFerry, type Ferry } from './harness.js';

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
  ferry = await startFerry({ targets: () => [failing], server: { logger: true, logStream: stream } });
});
afterAll(async () => ferry?.close());

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
