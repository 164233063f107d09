// The credential and signed-link rules of RemoteClient (http.ts "Credentials", "Signed
// storage links"): two loopback origins, the service's own and a storage host, each
// recording what it received.
import http from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { closeServers, listenOnLoopback } from '../../../test/emulators/shared/http.js';
import { FerryError } from '../errors.js';
import { RemoteClient } from './http.js';

const TOKEN = 'personal-token-0123456789';
interface Seen {
  url: string;
  authorization: string | undefined;
  /** every header whose name says key (X-Dataverse-key, X-API-Key) */
  keys: string[];
  at: number;
}

const keyHeaders = (req: http.IncomingMessage) => Object.keys(req.headers).filter((name) => /key/i.test(name));

let service: http.Server;
let elsewhere: http.Server;
let serviceUrl = '';
let elsewhereUrl = '';
const seen: { service: Seen[]; elsewhere: Seen[] } = { service: [], elsewhere: [] };
/** how long a signed link stays valid, ms, and how many refusals the storage host has left */
let linkLifetimeMs = 10_000;
let refusals = 0;

beforeAll(async () => {
  service = http.createServer((req, res) => {
    seen.service.push({ url: req.url ?? '', authorization: req.headers.authorization, keys: keyHeaders(req), at: Date.now() });
    req.resume();
    if (req.url?.startsWith('/v2/ping')) return void res.writeHead(200).end('pong');
    // like figshare's ndownloader: a 302 to a storage URL signed for a short while
    res.writeHead(302, { location: `${elsewhereUrl}/bucket/file?expires=${Date.now() + linkLifetimeMs}` }).end();
  });
  elsewhere = http.createServer((req, res) => {
    seen.elsewhere.push({ url: req.url ?? '', authorization: req.headers.authorization, keys: keyHeaders(req), at: Date.now() });
    req.resume();
    const expires = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('expires') ?? Infinity);
    if (refusals > 0 || Date.now() > expires) {
      refusals = Math.max(0, refusals - 1);
      return void res.writeHead(403, { 'content-type': 'application/xml' }).end('<Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>');
    }
    res.writeHead(200, { 'content-type': 'text/plain' }).end('bytes');
  });
  serviceUrl = await listenOnLoopback(service);
  elsewhereUrl = await listenOnLoopback(elsewhere);
});
afterAll(() => closeServers(service, elsewhere));
beforeEach(() => {
  seen.service.length = 0;
  seen.elsewhere.length = 0;
  linkLifetimeMs = 10_000;
  refusals = 0;
});

const client = (rate = 100, downloads = true) =>
  new RemoteClient({ baseUrl: `${serviceUrl}/v2/`, serviceName: 'figshare', retries: 0, ratePerSecond: rate, credentialOrigins: downloads ? [serviceUrl] : [] });

describe('RemoteClient: a token stays on its own service', () => {
  it('sends no token of any kind to a URL on another host the caller asked for (a link-only file)', async () => {
    const response = await client().request(`${elsewhereUrl}/bucket/file`, { token: TOKEN, tokenQuery: 'token', headers: { authorization: `token ${TOKEN}` } });
    expect(await response.text()).toBe('bytes');
    expect(seen.elsewhere).toHaveLength(1);
    expect(seen.elsewhere[0]!.url).not.toContain(TOKEN);
    expect(seen.elsewhere[0]!.authorization).toBeUndefined();
  });

  it('keeps a key header a caller set (Dataverse\'s X-Dataverse-key) off a redirect to another host', async () => {
    const response = await client(100, false).request(`${serviceUrl}/files/2`, { headers: { 'X-Dataverse-key': TOKEN } });
    expect(await response.text()).toBe('bytes');
    expect(seen.service[0]!.keys).toEqual(['x-dataverse-key']);
    expect(seen.elsewhere[0]!.keys).toEqual([]);
  });

  it('puts `tokenQuery` on a credentialed origin only, and never on the redirect', async () => {
    expect(await (await client().request(`${serviceUrl}/files/1`, { token: TOKEN, tokenQuery: 'token' })).text()).toBe('bytes');
    expect(seen.service[0]!.url).toContain(`token=${TOKEN}`);
    expect(seen.service[0]!.authorization).toBeUndefined();
    expect(seen.elsewhere[0]!.url).not.toContain(TOKEN);
  });
});

describe('RemoteClient: signed storage links', () => {
  it('follows the signed link at once, outside the rate queue (a 1-a-second queue would let it expire)', async () => {
    linkLifetimeMs = 400;
    const c = client(1);
    await (await c.request('ping')).text(); // takes this second's one slot
    const response = await c.request(`${serviceUrl}/files/1`, { token: TOKEN, tokenQuery: 'token' });
    expect(await response.text()).toBe('bytes');
    expect(seen.elsewhere[0]!.at - seen.service.at(-1)!.at).toBeLessThan(400);
  });

  it('a 403 from the storage host fetches a fresh link once instead of calling the token invalid', async () => {
    refusals = 1;
    const response = await client().request(`${serviceUrl}/files/1`, { token: TOKEN, tokenQuery: 'token' });
    expect(await response.text()).toBe('bytes');
    expect(seen.service.filter((s) => s.url.startsWith('/files/1'))).toHaveLength(2);
  });

  it('a second refusal is a 502 naming the storage host and the expiring link, not the token', async () => {
    refusals = 2;
    const error = await client().request(`${serviceUrl}/files/1`, { token: TOKEN, tokenQuery: 'token' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FerryError);
    expect((error as FerryError).status).toBe(502);
    expect((error as FerryError).message).toContain(new URL(elsewhereUrl).host);
    expect((error as FerryError).message).toMatch(/signed for a few seconds/);
    expect((error as FerryError).message).not.toMatch(/token/i);
  });
});
