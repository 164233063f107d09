// Hostile headers (issue #9 part 2): random names and values, control characters, huge
// values, repeated headers, bogus Content-Length / Transfer-Encoding combinations, Range,
// Accept, Expect, Upgrade, and the token headers with garbage, on every kind of route.
// Every answer is a JSON error of API.md's shape (or a legitimate success); see hostile.ts.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { modeTimeout } from '../../support/stress.js';
import {
  CONCURRENCY,
  CRLF,
  casesPer,
  expectCleanAfter,
  figure,
  fuzzParallel,
  jobs,
  newTally,
  probe,
  startFixture,
  type Fixture,
} from './hostile.js';

let fixture: Fixture;
beforeAll(async () => {
  fixture = await startFixture();
});
afterAll(async () => fixture?.close());

const KNOWN_NAMES = [
  'Content-Length', 'Transfer-Encoding', 'Content-Type', 'Content-Encoding', 'Range', 'If-Range', 'Accept', 'Accept-Encoding',
  'Accept-Version', 'Accept-Language', 'Expect', 'Connection', 'Upgrade', 'Keep-Alive', 'TE', 'Trailer', 'Host', 'Origin',
  'Referer', 'Cookie', 'Authorization', 'service-source-token', 'service-destination-token', 'duplicate-file-action',
  'If-None-Match', 'If-Modified-Since', 'X-Forwarded-For', 'X-Forwarded-Host', 'X-Forwarded-Proto', 'Forwarded',
  'X-HTTP-Method-Override', 'Proxy-Connection', 'User-Agent', 'Content-Disposition', 'Last-Event-ID', 'Sec-Fetch-Site',
];

const tokenChars = fc.constantFrom(...'!#$%&\'*+.^_`|~-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'.split(''));
const headerName = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom(...KNOWN_NAMES).chain((name) => fc.constantFrom(name, name.toLowerCase(), name.toUpperCase(), ` ${name}`, `${name} `)) },
  { weight: 3, arbitrary: fc.string({ unit: tokenChars, minLength: 1, maxLength: 40 }) },
  // names no parser should accept: spaces, colons, control characters, high bytes
  { weight: 1, arbitrary: fc.string({ unit: 'binary-ascii', minLength: 0, maxLength: 20 }).map((s) => s.replace(/[\r\n]/g, '')) },
);

const garbageToken = fc.oneof(
  fc.string({ minLength: 8, maxLength: 80 }).map((s) => s.replace(/[\r\n]/g, '')),
  fc.uint8Array({ minLength: 8, maxLength: 64 }).map((bytes) => Buffer.from(bytes).toString('base64url')),
  fc.constantFrom('Bearer', 'Bearer ', 'Bearer  x', 'bearer null', 'Basic Zm9vOmJhcg==', 'Bearer undefined', 'Bearer [object Object]'),
);

const headerValue = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 60 }).map((s) => s.replace(/[\r\n]/g, '')) },
  { weight: 2, arbitrary: fc.constantFrom(
    '', ' ', '0', '-1', '1', '00001', '1e3', '0x10', '1,1', '1, 2', ' 1 ', '99999999999999999999', '18446744073709551616', 'NaN',
    'chunked', 'Chunked', 'chunked, gzip', 'gzip, chunked', 'gzip', 'identity', 'chunked, chunked', ' chunked', 'xchunked',
    'bytes=0-', 'bytes=-1', 'bytes=0-0,1-1', 'bytes=99999999999-', 'bytes=a-b', 'items=0-1',
    '*/*', 'text/html', 'text/html;q=1, */*;q=0', 'application/json', 'application/zip', 'text/event-stream', 'image/*;q=',
    'multipart/form-data', 'multipart/form-data; boundary=', 'multipart/form-data; boundary="', 'application/json; charset=utf-16',
    'application/json; charset=x-garbage', 'application/x-www-form-urlencoded', 'text/plain', ';;;', 'a/b/c',
    '100-continue', '100-Continue', '200-ok', 'websocket', 'h2c', 'upgrade', 'keep-alive, Upgrade', 'close, close',
    'ignore', 'update', 'IGNORE', 'ignore, update', 'overwrite', '__proto__', 'constructor', 'toString',
    '1.0.0', '>=1', '*', 'x'.repeat(300), 'http://evil.example', 'null', 'file://', 'for=1.2.3.4;host=evil',
  ) },
  { weight: 2, arbitrary: garbageToken },
  // control characters, DEL, latin-1 high bytes, raw UTF-8
  { weight: 2, arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 30 }).map((s) => s.replace(/[\r\n]/g, '')) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }).map((s) => Buffer.from(s, 'utf8').toString('latin1')) },
  { weight: 1, arbitrary: fc.constantFrom('\0', 'a\0b', '\x7f', '\x1b[31m', '\t', 'a\tb', '\x0b', '\x0c', '\xff\xfe') },
  // huge: at, around and over Node's 16 KiB header limit
  { weight: 1, arbitrary: fc.integer({ min: 4_000, max: 70_000 }).map((n) => 'h'.repeat(n)) },
);

const ROUTES = (f: Fixture) => [
  ['GET', '/api_v1/targets/'],
  ['GET', '/api_v1/targets/local/'],
  ['GET', '/api_v1/target/local/'],
  ['GET', '/api_v1/targets/local/resources/'],
  ['GET', `/api_v1/targets/local/resources/?container=${f.ids.folder}`],
  ['GET', `/api_v1/targets/local/resources/${f.ids.file}.json/`],
  ['GET', `/api_v1/targets/local/resources/${f.ids.file}/`],
  ['GET', `/api_v1/targets/local/resources/${f.ids.file}.zip/`],
  ['HEAD', `/api_v1/targets/local/resources/${f.ids.folder}.json/`],
  ['POST', `/api_v1/targets/local/resources/${f.ids.folder}/`],
  ['POST', '/api_v1/targets/local/resources/'],
  ['POST', `/api_v1/targets/offline/resources/${f.ids.archive}/verify/`],
  ['GET', `/api_v1/jobs/${f.ids.ticket}/`],
  ['DELETE', `/api_v1/jobs/${f.ids.ticket}/`],
  ['GET', '/api_v1/jobs/'],
  ['GET', '/api_v1/openapi.json'],
  ['GET', '/app/session'],
  ['PUT', '/app/tokens/local'],
  ['OPTIONS', '/api_v1/targets/'],
  ['GET', '/api_v1/nowhere/'],
  ['GET', '/'],
] as const;

const FRAMINGS = ['none', 'length', 'chunked', 'short-length', 'long-length', 'length-and-chunked', 'bad-chunks'] as const;
type Framing = (typeof FRAMINGS)[number];

/** what a parser accepts: a token name, a value without control characters (tab allowed) */
const legalName = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...KNOWN_NAMES) },
  { weight: 1, arbitrary: fc.string({ unit: tokenChars, minLength: 1, maxLength: 40 }) },
);
const legalValue = headerValue.map((value) =>
  [...value]
    .filter((c) => c === '\t' || (c >= ' ' && c !== '\x7f'))
    .join('')
    .slice(0, 6000),
);

const headerCase = fc.record({
  route: fc.nat(),
  withKey: fc.boolean(),
  // most cases well-formed, so they reach the routes; the rest anything at all
  headers: fc.oneof(
    { weight: 3, arbitrary: fc.array(fc.tuple(legalName, legalValue), { minLength: 1, maxLength: 8 }) },
    { weight: 1, arbitrary: fc.array(fc.tuple(headerName, headerValue), { minLength: 1, maxLength: 8 }) },
  ),
  // the same header line again, sometimes many times
  repeat: fc.option(fc.tuple(fc.nat(), fc.integer({ min: 2, max: 60 })), { nil: undefined }),
  framing: fc.constantFrom(...FRAMINGS),
  body: fc.constantFrom('', '{}', '{"source_target_name":"local","source_resource_id":"x"}', 'garbage', '--b\r\n\r\n'),
});

function frame(framing: Framing, body: string): { lines: string[]; bytes: string; complete: boolean } {
  const length = Buffer.byteLength(body);
  switch (framing) {
    case 'none':
      return { lines: [], bytes: '', complete: true };
    case 'length':
      return { lines: [`Content-Length: ${length}`], bytes: body, complete: true };
    case 'chunked':
      return { lines: ['Transfer-Encoding: chunked'], bytes: `${length ? `${length.toString(16)}${CRLF}${body}${CRLF}` : ''}0${CRLF}${CRLF}`, complete: true };
    case 'short-length':
      return { lines: [`Content-Length: ${length + 50}`], bytes: body, complete: false };
    case 'long-length':
      return { lines: [`Content-Length: ${Math.max(0, length - 3)}`], bytes: body, complete: false };
    case 'length-and-chunked':
      return { lines: [`Content-Length: ${length}`, 'Transfer-Encoding: chunked'], bytes: body, complete: false };
    case 'bad-chunks':
      return { lines: ['Transfer-Encoding: chunked'], bytes: `zz${CRLF}${body}${CRLF}0${CRLF}${CRLF}`, complete: false };
  }
}

describe('hostile headers', () => {
  it(
    'random, repeated, huge and control-character headers on every route: JSON errors or successes only',
    async () => {
      const tally = newTally();
      const jobsBefore = (await jobs(fixture)).length;
      const routes = ROUTES(fixture);
      await fuzzParallel(headerCase, casesPer(400, 30_000), CONCURRENCY, async (c) => {
        const [method, target] = routes[c.route % routes.length]!;
        const lines: string[] = [`Host: 127.0.0.1:${fixture.ferry.port}`];
        if (c.withKey) lines.push(`service-source-token: ${fixture.ferry.key}`, `service-destination-token: ${fixture.ferry.key}`);
        const fuzzed = c.headers.map(([name, value]) => `${name}: ${value}`);
        if (c.repeat) {
          const line = fuzzed[c.repeat[0] % fuzzed.length]!;
          for (let i = 1; i < c.repeat[1]; i++) fuzzed.push(line);
        }
        const framing = frame(c.framing, method === 'POST' || method === 'PUT' ? c.body : '');
        const request = `${method} ${target} HTTP/1.1${CRLF}${[...lines, ...fuzzed, ...framing.lines, 'Connection: close'].map((l) => l + CRLF).join('')}${CRLF}${framing.bytes}`;
        // a fuzzed framing header may leave the server rightly waiting for body bytes
        const framingFuzzed = c.headers.some(([name]) => /^\s*(content-length|transfer-encoding|expect)\s*$/i.test(name));
        await probe(fixture, tally, {
          request: Buffer.from(request, 'latin1'),
          method,
          secrets: c.headers.filter(([name]) => /token|authorization|cookie/i.test(name)).map(([, value]) => value.trim()),
          expectAnswer: framing.complete && !framingFuzzed,
        });
      });
      await expectCleanAfter(fixture, jobsBefore, tally);
      figure('headers', tally);
    },
    modeTimeout(90_000, 3_600_000),
  );

  it(
    'the token headers with garbage (and the key split, padded, repeated) never get in, never echo',
    async () => {
      const tally = newTally();
      const jobsBefore = (await jobs(fixture)).length;
      const key = fixture.ferry.key;
      const keyish = fc.constantFrom(key.slice(1), `${key}x`, key.toUpperCase(), `${key}, ${key}`, `${key}\0`, Buffer.from(key).toString('base64'));
      const routes = ROUTES(fixture);
      await fuzzParallel(
        fc.record({
          route: fc.nat(),
          source: fc.option(fc.oneof(garbageToken, keyish), { nil: undefined }),
          destination: fc.option(fc.oneof(garbageToken, keyish), { nil: undefined }),
          authorization: fc.option(fc.oneof(garbageToken, keyish.map((k) => `Bearer ${k}`)), { nil: undefined }),
          twice: fc.boolean(),
        }),
        casesPer(300, 20_000),
        CONCURRENCY,
        async (c) => {
          const [method, target] = routes[c.route % routes.length]!;
          const lines = [`Host: 127.0.0.1:${fixture.ferry.port}`];
          const secrets: string[] = [];
          for (const [name, value] of [['service-source-token', c.source], ['service-destination-token', c.destination], ['Authorization', c.authorization]] as const) {
            if (value === undefined) continue;
            lines.push(`${name}: ${value}`);
            if (c.twice) lines.push(`${name}: ${value}`);
            secrets.push(value.trim());
          }
          const body = method === 'POST' || method === 'PUT' ? '{}' : '';
          if (body) lines.push('Content-Type: application/json', 'duplicate-file-action: ignore', `Content-Length: ${body.length}`);
          const request = `${method} ${target} HTTP/1.1${CRLF}${[...lines, 'Connection: close'].map((l) => l + CRLF).join('')}${CRLF}${body}`;
          const got = await probe(fixture, tally, { request: Buffer.from(request, 'latin1'), method, secrets, expectAnswer: true });
          // only the exact key opens a local route: none of these is it
          const guarded = !/^\/api_v1\/(targets\/|target\/|openapi|nowhere)|^\/$/.test(target) || target.includes('/resources/');
          const status = got.answers.at(-1)!.status;
          if (guarded && status < 400) throw new Error(`${method} ${target} answered ${status} to garbage credentials ${JSON.stringify(c)}`);
        },
      );
      await expectCleanAfter(fixture, jobsBefore, tally);
      figure('token headers', tally);
    },
    modeTimeout(90_000, 3_600_000),
  );
});
