// A remote token goes only to the service's own origin. Two loopback servers on two ports
// (two origins): the "API" redirects to the "storage" host, which records what it got.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RemoteClient } from '../../electron/core/remote/http.js';

const TOKEN = 'secret-remote-token-123';
interface Seen {
  url: string;
  headers: http.IncomingHttpHeaders;
}

let api: http.Server;
let storage: http.Server;
let apiUrl: string;
let storageUrl: string;
const seenByStorage: Seen[] = [];
const seenByApi: Seen[] = [];

function listen(server: http.Server): Promise<string> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
}

beforeAll(async () => {
  api = http.createServer((req, res) => {
    seenByApi.push({ url: req.url ?? '', headers: req.headers });
    const status = Number(/status=(\d+)/.exec(req.url ?? '')?.[1] ?? 302);
    if (req.url?.startsWith('/v1/echo')) {
      res.writeHead(403, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ message: `token ${req.headers.authorization ?? ''} may not do this` }));
      return;
    }
    if (req.url?.startsWith('/v1/back')) {
      res.writeHead(200).end('back home');
      return;
    }
    req.resume();
    res.writeHead(status, { location: `${storageUrl}/bucket/file?signed=1` }).end();
  });
  storage = http.createServer((req, res) => {
    seenByStorage.push({ url: req.url ?? '', headers: req.headers });
    req.resume();
    if (req.url?.startsWith('/bounce')) {
      res.writeHead(302, { location: `${apiUrl}/v1/back` }).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain' }).end('bytes');
  });
  apiUrl = await listen(api);
  storageUrl = await listen(storage);
});
afterAll(async () => {
  await new Promise((resolve) => api.close(resolve));
  await new Promise((resolve) => storage.close(resolve));
});

const client = () => new RemoteClient({ baseUrl: `${apiUrl}/v1/`, serviceName: 'Test', retries: 0, ratePerSecond: 100 });
const credentialHeaders = (headers: http.IncomingHttpHeaders) =>
  Object.entries(headers)
    .filter(([name]) => ['authorization', 'private-token', 'cookie', 'proxy-authorization', 'x-auth-token'].includes(name))
    .map(([name, value]) => `${name}: ${String(value)}`);

describe('RemoteClient redirects', () => {
  for (const status of [301, 302, 303, 307, 308]) {
    it(`${status} to another origin (another port) drops the token given as \`token\``, async () => {
      seenByStorage.length = 0;
      const response = await client().request(`download?status=${status}`, { token: TOKEN });
      expect(await response.text()).toBe('bytes');
      expect(seenByApi.at(-1)!.headers.authorization).toBe(`Bearer ${TOKEN}`);
      expect(seenByStorage).toHaveLength(1);
      expect(credentialHeaders(seenByStorage[0]!.headers)).toEqual([]);
    });
  }

  it('drops credentials the caller put in `headers` (figshare: Authorization: token …, GitLab: PRIVATE-TOKEN)', async () => {
    seenByStorage.length = 0;
    const headers = { authorization: `token ${TOKEN}`, 'PRIVATE-TOKEN': TOKEN, cookie: `s=${TOKEN}`, 'x-auth-token': TOKEN, accept: 'application/json' };
    for (const status of [302, 307]) await (await client().request(`download?status=${status}`, { headers, method: 'GET' })).text();
    expect(seenByStorage).toHaveLength(2);
    for (const seen of seenByStorage) {
      expect(credentialHeaders(seen.headers)).toEqual([]);
      expect(JSON.stringify(seen.headers)).not.toContain(TOKEN);
      expect(seen.headers.accept).toBe('application/json'); // harmless headers still go
    }
  });

  it('does not send the token again after a redirect away and back (credentials stay dropped for the rest of the chain)', async () => {
    seenByApi.length = 0;
    const c = client();
    const response = await c.request(`${storageUrl}/bounce`, { token: TOKEN, headers: { authorization: `token ${TOKEN}` } });
    expect(await response.text()).toBe('back home');
    // the caller chose the storage URL itself; Ferry's own token (option `token`) may go to
    // the API origin, but the caller's hand-set header never rides a cross-origin hop
    const back = seenByApi.find((seen) => seen.url.startsWith('/v1/back'))!;
    expect(back.headers.authorization ?? '').not.toBe(`token ${TOKEN}`);
  });

  it('an error body that echoes the token does not carry it into the error message', async () => {
    const error = (await client().request('echo', { token: TOKEN }).catch((e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(Error);
    expect(error.message).toMatch(/may not do this|no access/);
    expect(error.message).not.toContain(TOKEN);
  });
});
