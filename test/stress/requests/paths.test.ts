// Hostile paths and resource ids (issue #9 part 2): percent-encodings (valid, invalid,
// double, overlong UTF-8), `..`, NUL, very long paths, random unicode, the `.json/` and
// `.zip/` suffixes in every spelling, in the id segment of every route that takes one
// (listing's container, detail, download, upload, verify, jobs/<id>, cancel), in the target
// segment, and as whole random request targets with random methods. Every answer is a JSON
// error of API.md's shape or a legitimate success (hostile.ts); nothing outside the
// workspace is ever served, and the workspace is unchanged but for files a legitimate
// upload put in its folder.
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawZip } from '../../../electron/core/zip/testing/raw-zip.js';
import { snapshotTree, writeTree } from '../../api/harness.js';
import { modeTimeout } from '../../support/stress.js';
import { CONCURRENCY, CRLF, casesPer, expectCleanAfter, figure, fuzzParallel, jobs, newTally, probe, startFixture, type Fixture } from './hostile.js';

const OUTSIDE_SECRET = 'OUTSIDE-THE-WORKSPACE-7f3a';
let fixture: Fixture;
let outside: string;
beforeAll(async () => {
  fixture = await startFixture();
  outside = path.join(fixture.ferry.root, 'outside');
  await writeTree(outside, { 'secret.txt': `${OUTSIDE_SECRET}\n` });
});
afterAll(async () => fixture?.close());

const hex = (n: number) => n.toString(16).toUpperCase().padStart(2, '0');
const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64url');

/** path pieces a traversal or a decoder might trip on */
const TRICKS = [
  '..', '.', '...', '%2e%2e', '%2E%2E', '%2e.', '.%2e', '%252e%252e', '%25%32%65', '%c0%ae%c0%ae', '%e0%80%ae%e0%80%ae', '%c0%af',
  '%e0%80%af', '%2f', '%2F..%2F', '%5c', '..%5c..%5c', '..\\..\\', '%00', 'x%00.json', '%', '%%', '%G1', '%e2%82', '%ff%fe',
  '%ef%bc%8e%ef%bc%8e', '\u2025', '%u002e', '~', '*', '?', '#', ';', ';jsessionid=1', '.json', '.zip', '.JSON', 'x.json', 'x.zip',
  '.json.zip', '.zip.json', 'None', 'null', 'undefined', '__proto__', 'constructor', 'prototype', 'toString', 'loc_', 'zip_',
  'loc_Li4', 'loc_Li4vb3V0c2lkZS9zZWNyZXQudHh0', 'loc_L2V0Yy9wYXNzd2Q', 'loc_Li4=', 'loc_%2E%2E', 'zip_000000000000000000000000',
  'zip_../..', 'verify', 'events', 'resources', 'api_v1', ' ', '%20', '%09', '%0d%0a', '%0aSet-Cookie:x=1', '\t',
];

const encodedBytes = fc.uint8Array({ minLength: 1, maxLength: 12 }).map((bytes) => [...bytes].map((b) => `%${hex(b)}`).join(''));
const rawUnicode = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }).map((s) => Buffer.from(s, 'utf8').toString('latin1'));
const encodedUnicode = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }).map((s) => encodeURIComponent(s));
const rawBytes = fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 8 }).map((s) => s.replace(/[\r\n ]/g, ''));
const traversalId = fc
  .array(fc.constantFrom('..', '.', 'Data', 'a.txt', 'outside', 'secret.txt', '', '/', '\\', '\0', 'C:', 'sub', 'b.txt', '%2e'), { minLength: 1, maxLength: 6 })
  .map((parts) => `loc_${b64(parts.join('/'))}`);
const longSegment = fc.integer({ min: 200, max: 70_000 }).chain((n) => fc.constantFrom('a', '%2e', 'é', '/', '..%2F').map((unit) => unit.repeat(Math.ceil(n / unit.length))));

function segmentArbitrary(realIds: string[]) {
  const real = fc.constantFrom(...realIds);
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...TRICKS) },
    { weight: 2, arbitrary: fc.tuple(real, fc.constantFrom(...TRICKS, '', 'x', '=', '==')).map(([id, trick]) => id + trick) },
    { weight: 2, arbitrary: fc.tuple(fc.constantFrom(...TRICKS), real).map(([trick, id]) => trick + id) },
    { weight: 1, arbitrary: real.map((id) => encodeURIComponent(id).replace(/[A-Za-z]/g, (c) => `%${hex(c.charCodeAt(0))}`)) },
    { weight: 1, arbitrary: real.map((id) => id.toUpperCase()) },
    { weight: 1, arbitrary: real.map((id) => id.slice(0, -1)) },
    { weight: 2, arbitrary: traversalId },
    { weight: 2, arbitrary: encodedBytes },
    { weight: 1, arbitrary: rawUnicode },
    { weight: 1, arbitrary: encodedUnicode },
    { weight: 1, arbitrary: rawBytes },
    { weight: 1, arbitrary: longSegment },
    { weight: 1, arbitrary: fc.array(fc.constantFrom(...TRICKS), { minLength: 2, maxLength: 5 }).map((parts) => parts.join('')) },
  );
}

const SUFFIXES = ['', '/', '.json', '.json/', '.zip', '.zip/', '.JSON/', '.Zip/', '.json//', '//', '.zip/x', '.json.zip/', '.zip.json/', '/.json', '%2Ejson/', '.json%2F', '.json/?', '/verify/', '/verify', '/x/'];
const QUERIES = ['', '?', '?keep=1', '?keep=true', '?keep=%00', '?keep=1&keep=0', '?container=None', '?container=', '?container=None&container=x', '?a[b]=1', '?__proto__[x]=1', '?constructor=1', '?container=%ZZ', `?x=${'q'.repeat(3000)}`];
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH', 'TRACE', 'PROPFIND', 'CONNECT', 'get', 'G\u00e9T', 'M-SEARCH'];

function uploadBody(): { headers: string[]; body: Buffer } {
  const boundary = 'fuzzBoundary';
  const zip = rawZip([{ name: 'fuzz-upload.txt', data: Buffer.from('fuzz\n') }]);
  const body = Buffer.concat([
    Buffer.from(`--${boundary}${CRLF}Content-Disposition: form-data; name="service-file"; filename="u.zip"${CRLF}Content-Type: application/zip${CRLF}${CRLF}`),
    zip,
    Buffer.from(`${CRLF}--${boundary}--${CRLF}`),
  ]);
  return { headers: [`Content-Type: multipart/form-data; boundary=${boundary}`, `Content-Length: ${body.length}`, 'duplicate-file-action: ignore'], body };
}

interface PathCase {
  method: string;
  target: string;
}

function send(c: PathCase, tally: ReturnType<typeof newTally>) {
  const lines = [`Host: 127.0.0.1:${fixture.ferry.port}`, `service-source-token: ${fixture.ferry.key}`, `service-destination-token: ${fixture.ferry.key}`];
  let body: Buffer = Buffer.alloc(0);
  if (c.method === 'POST') {
    const upload = uploadBody();
    lines.push(...upload.headers);
    body = upload.body;
  }
  const head = `${c.method} ${c.target} HTTP/1.1${CRLF}${[...lines, 'Connection: close'].map((line) => line + CRLF).join('')}${CRLF}`;
  return probe(fixture, tally, { request: Buffer.concat([Buffer.from(head, 'latin1'), body]), method: c.method.toUpperCase(), expectAnswer: true });
}

/**
 * The workspace as it was, but for what a legitimate upload (a fuzzed path that still named
 * the folder, or the top level) added: `fuzz-upload.txt` in Data, `fuzz-upload (n).txt` on top,
 * and the provenance record (`ferry-provenance.json`) such an upload writes or extends there.
 */
async function expectWorkspaceKept(before: Record<string, string>): Promise<void> {
  const after = await snapshotTree(fixture.ferry.workspace);
  for (const [name, kind] of Object.entries(after)) if (!/^(Data\/)?(fuzz-upload( \(\d+\))?\.txt|ferry-provenance\.json)$/.test(name)) expect(kind, name).toBe(before[name]);
  for (const name of Object.keys(before)) expect(after[name], name).toBeDefined();
}

describe('hostile paths and ids', () => {
  it(
    'in the id segment of every route that takes one',
    async () => {
      const tally = newTally();
      const jobsBefore = (await jobs(fixture)).length;
      const workspace = await snapshotTree(fixture.ferry.workspace);
      const { folder, file, archive, ticket } = fixture.ids;
      const segment = segmentArbitrary([folder, file, archive, ticket]);
      const routes = [
        (s: string, sfx: string, q: string) => ({ method: 'GET', target: `/api_v1/targets/local/resources/${s}${sfx}${q}` }),
        (s: string, sfx: string, q: string) => ({ method: 'HEAD', target: `/api_v1/targets/local/resources/${s}${sfx}${q}` }),
        (s: string, _sfx: string, q: string) => ({ method: 'GET', target: `/api_v1/targets/local/resources/?container=${s}${q.replace('?', '&')}` }),
        (s: string, _sfx: string, q: string) => ({ method: 'GET', target: `/api_v1/targets/offline/resources/?container=${s}${q.replace('?', '&')}` }),
        (s: string, sfx: string, q: string) => ({ method: 'GET', target: `/api_v1/targets/offline/resources/${s}${sfx}${q}` }),
        (s: string, sfx: string) => ({ method: 'POST', target: `/api_v1/targets/local/resources/${s}${sfx === '/verify/' ? '/' : sfx}` }),
        (s: string, sfx: string) => ({ method: 'POST', target: `/api_v1/targets/offline/resources/${s}/verify/${sfx === '/' ? '' : ''}` }),
        (s: string, sfx: string) => ({ method: 'POST', target: `/api_v1/targets/local/resources/${s}/verify${sfx.startsWith('/') ? '/' : ''}` }),
        (s: string, sfx: string, q: string) => ({ method: 'GET', target: `/api_v1/jobs/${s}${sfx.startsWith('/') ? sfx : '/'}${q}` }),
        (s: string, sfx: string) => ({ method: 'DELETE', target: `/api_v1/jobs/${s}${sfx.startsWith('/') ? sfx : '/'}` }),
        (s: string, sfx: string) => ({ method: 'GET', target: `/api_v1/targets/${s}${sfx.startsWith('/') ? sfx : '/'}` }),
        (s: string) => ({ method: 'GET', target: `/api_v1/target/${s}/` }),
        (s: string, _sfx: string, q: string) => ({ method: 'GET', target: `/api_v1/targets/${s}/resources/${q}` }),
        (s: string, sfx: string) => ({ method: 'GET', target: `/api_v1/targets/${s}/resources/${file}${sfx}` }),
        (s: string) => ({ method: 'PUT', target: `/app/tokens/${s}` }),
      ];
      await fuzzParallel(
        fc.record({ route: fc.nat(), segment, suffix: fc.constantFrom(...SUFFIXES), query: fc.constantFrom(...QUERIES) }),
        casesPer(600, 40_000),
        CONCURRENCY,
        async (c) => {
          const pathCase = routes[c.route % routes.length]!(c.segment, c.suffix, c.query);
          const got = await send(pathCase, tally);
          for (const answer of got.answers) {
            if (answer.body.includes(OUTSIDE_SECRET)) throw new Error(`${pathCase.method} ${pathCase.target.slice(0, 300)} served a file from outside the workspace`);
          }
        },
      );
      await expectCleanAfter(fixture, jobsBefore, tally);
      figure('paths: id segments', tally);
      await expectWorkspaceKept(workspace);
    },
    modeTimeout(90_000, 3_600_000),
  );

  it(
    'as whole request targets, with any method',
    async () => {
      const tally = newTally();
      const jobsBefore = (await jobs(fixture)).length;
      const workspace = await snapshotTree(fixture.ferry.workspace);
      const { folder, file } = fixture.ids;
      const piece = fc.oneof(
        { weight: 3, arbitrary: fc.constantFrom('api_v1', 'targets', 'target', 'local', 'offline', 'resources', 'jobs', 'events', 'app', 'session', 'tokens', 'openapi.json', folder, `${file}.zip`, `${folder}.json`, '') },
        { weight: 2, arbitrary: segmentArbitrary([folder, file]) },
      );
      const requestTarget = fc.oneof(
        { weight: 6, arbitrary: fc.array(piece, { minLength: 1, maxLength: 7 }).map((parts) => `/${parts.join('/')}`) },
        { weight: 1, arbitrary: fc.array(piece, { minLength: 1, maxLength: 5 }).map((parts) => `/${parts.join('\\')}`) },
        { weight: 1, arbitrary: fc.array(piece, { minLength: 1, maxLength: 5 }).map((parts) => `//${parts.join('//')}`) },
        { weight: 1, arbitrary: fc.constantFrom('*', '', 'api_v1/targets/', 'http://127.0.0.1/api_v1/targets/', 'http://evil.example/api_v1/targets/', 'https://[::1]/', '/api_v1/../app/session', '/%2e%2e/%2e%2e/etc/passwd', '/api_v1/targets/%2e%2e/jobs/', '/..;/api_v1/jobs/', '/api_v1/openapi.json/..', '/api_v1/openapi.json%00.html', '/api_v1/targets/?callback=<script>', `/${'a/'.repeat(5000)}`) },
        { weight: 1, arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 60 }).map((s) => `/${s.replace(/[\r\n ]/g, '')}`) },
        { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 30 }).map((s) => `/${Buffer.from(s, 'utf8').toString('latin1').replace(/[\r\n ]/g, '')}`) },
      );
      await fuzzParallel(
        fc.record({ method: fc.oneof({ weight: 4, arbitrary: fc.constantFrom('GET', 'POST', 'DELETE') }, { weight: 2, arbitrary: fc.constantFrom(...METHODS) }), target: requestTarget, query: fc.constantFrom(...QUERIES) }),
        casesPer(600, 40_000),
        CONCURRENCY,
        async (c) => {
          const target = c.target.includes('?') ? c.target : c.target + c.query;
          const got = await send({ method: c.method, target }, tally);
          for (const answer of got.answers) {
            if (answer.body.includes(OUTSIDE_SECRET)) throw new Error(`${c.method} ${target.slice(0, 300)} served a file from outside the workspace`);
          }
        },
      );
      await expectCleanAfter(fixture, jobsBefore, tally);
      figure('paths: whole targets', tally);
      await expectWorkspaceKept(workspace);
    },
    modeTimeout(90_000, 3_600_000),
  );
});
