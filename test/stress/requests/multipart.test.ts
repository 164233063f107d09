// Hostile multipart upload bodies (issue #9 part 2): missing, duplicated, mismatched and
// malformed boundaries; huge parts (over the upload limit), many parts, part headers of
// garbage, wrong field names, duplicated `service-file`, non-ZIP content, truncated bodies
// (cut anywhere, with Content-Length or chunked), preamble and epilogue. Every answer is a
// JSON error of API.md's shape or a 202 for a body that really carries one ZIP; a refused
// upload leaves no spool file and no job (hostile.ts: expectCleanAfter).
import fc from 'fast-check';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { rawZip } from '../../../electron/core/zip/testing/raw-zip.js';
import { modeTimeout } from '../../support/stress.js';
import { CONCURRENCY, CRLF, casesPer, expectCleanAfter, figure, fuzzParallel, jobs, newTally, probe, startFixture, type Fixture } from './hostile.js';

let fixture: Fixture;
beforeAll(async () => {
  fixture = await startFixture();
});
afterAll(async () => fixture?.close());

/** the fixture's upload limit is 256 KiB */
const ZIP = rawZip([{ name: 'fz/x.txt', data: Buffer.from('x\n') }]);

const content = fc.oneof(
  { weight: 4, arbitrary: fc.constant(ZIP) },
  { weight: 1, arbitrary: fc.nat({ max: ZIP.length - 1 }).map((n) => ZIP.subarray(0, n)) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 2000 }).map((bytes) => Buffer.from(bytes)) },
  { weight: 1, arbitrary: fc.constantFrom(Buffer.from('PK\x03\x04'), Buffer.from('PK\x05\x06'), Buffer.from('not a zip'), Buffer.alloc(0), Buffer.from('--')) },
  // over the limit, or just under it
  { weight: 1, arbitrary: fc.integer({ min: 200 * 1024, max: 400 * 1024 }).map((n) => Buffer.concat([ZIP, Buffer.alloc(n, 0x41)])) },
  // bytes that look like the boundary inside the content
  { weight: 1, arbitrary: fc.constant(Buffer.concat([ZIP, Buffer.from(`${CRLF}--b`), ZIP])) },
);

const disposition = fc.oneof(
  { weight: 5, arbitrary: fc.constant('form-data; name="service-file"; filename="u.zip"') },
  { weight: 3, arbitrary: fc.constantFrom(
    'form-data; name="service-file"', 'form-data; name=service-file; filename=u.zip', 'form-data; name="SERVICE-FILE"; filename="u.zip"',
    'form-data; name="service-file "; filename="u.zip"', 'form-data; name="file"; filename="u.zip"', 'form-data; filename="u.zip"',
    'form-data; name=""; filename="u.zip"', 'form-data; name="service-file"; filename=""', 'form-data; name="service-file"; filename="../../x.zip"',
    "form-data; name=\"service-file\"; filename*=UTF-8''%E2%80%AE.zip", 'form-data; name="service-file"; name="other"; filename="u.zip"',
    'attachment; name="service-file"; filename="u.zip"', 'form-data', '', ';;;', 'form-data; name="service-file"; filename="u.zip"; filename="v.zip"',
    'form-data; name="__proto__"; filename="u.zip"', 'form-data; name="constructor"', 'form-data; name="service-file\u0000"; filename="u.zip"',
    `form-data; name="${'n'.repeat(5000)}"; filename="u.zip"`, `form-data; name="service-file"; filename="${'f'.repeat(5000)}.zip"`,
  ) },
  { weight: 1, arbitrary: fc.string({ maxLength: 80 }).map((s) => s.replace(/[\r\n]/g, '')) },
);

const partHeaderLines = fc.array(
  fc.oneof(
    fc.constantFrom('Content-Type: application/zip', 'Content-Type: text/plain', 'Content-Type: ', 'Content-Transfer-Encoding: base64', 'Content-Length: 5', 'Content-Length: -1', 'X: y', 'no colon here', ': empty name', 'Content-Type: multipart/mixed; boundary=b'),
    fc.string({ unit: 'binary-ascii', maxLength: 40 }).map((s) => s.replace(/[\r\n]/g, '')),
    fc.integer({ min: 1000, max: 90_000 }).map((n) => `X-Huge: ${'h'.repeat(n)}`),
  ),
  { maxLength: 3 },
);

const part = fc.record({
  disposition: fc.option(disposition, { nil: undefined, freq: 8 }),
  headers: partHeaderLines,
  content,
  /** a text field instead of a file */
  text: fc.oneof(
    { weight: 3, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.oneof(fc.string({ maxLength: 40 }), fc.integer({ min: 60_000, max: 80_000 }).map((n) => 'v'.repeat(n))) },
  ),
});

const BOUNDARIES = ['b', 'fuzzBoundary', '----WebKitFormBoundary7MA4YWxkTrZu0gW', 'x'.repeat(70), 'x'.repeat(200), 'a b', 'é', '"', '--', ''];

const multipartCase = fc.record({
  route: fc.constantFrom('top', 'top', 'folder', 'folder', 'file', 'offline', 'missing'),
  boundary: fc.oneof({ weight: 3, arbitrary: fc.constantFrom('b', 'fuzzBoundary') }, { weight: 1, arbitrary: fc.constantFrom(...BOUNDARIES) }),
  /** how the Content-Type names the boundary */
  typeForm: fc.constantFrom('plain', 'plain', 'plain', 'plain', 'plain', 'quoted', 'missing', 'other', 'twice', 'empty', 'uppercase-type', 'charset-first'),
  parts: fc.oneof(
    // one good ZIP part, perhaps among small text fields: most of these should be accepted
    { weight: 4, arbitrary: fc.tuple(fc.array(fc.string({ maxLength: 20 }), { maxLength: 3 }), fc.nat()).map(([fields, at]) => {
      const parts: Array<{ disposition?: string; headers: string[]; content: Buffer; text?: string }> = fields.map((value, i) => ({ disposition: `form-data; name="note${i}"`, headers: [], content: Buffer.alloc(0), text: value }));
      parts.splice(at % (parts.length + 1), 0, { disposition: 'form-data; name="service-file"; filename="u.zip"', headers: ['Content-Type: application/zip'], content: ZIP });
      return parts;
    }) },
    { weight: 4, arbitrary: fc.array(part, { minLength: 0, maxLength: 4 }) },
    { weight: 1, arbitrary: fc.array(part.map((p) => ({ ...p, content: Buffer.from('v') })), { minLength: 20, maxLength: 80 }) },
  ),
  preamble: fc.constantFrom('', '', 'preamble text\r\n', '\r\n'),
  ending: fc.constantFrom('close', 'close', 'close', 'none', 'no-crlf', 'epilogue', 'double-close'),
  /** cut the body after this fraction of it (undefined: whole) */
  cut: fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.integer({ min: 0, max: 999 }).map((n) => n / 1000) }),
  framing: fc.constantFrom('length', 'length', 'length', 'chunked'),
  action: fc.constantFrom('ignore', 'ignore', 'ignore', 'update', 'bogus'),
});

type MultipartCase = typeof multipartCase extends fc.Arbitrary<infer T> ? T : never;

function build(c: MultipartCase): { request: Buffer; complete: boolean } {
  const b = c.boundary;
  const chunks: Buffer[] = [Buffer.from(c.preamble)];
  for (const p of c.parts) {
    const lines = [...(p.disposition !== undefined ? [`Content-Disposition: ${p.disposition}`] : []), ...p.headers];
    chunks.push(Buffer.from(`--${b}${CRLF}${lines.map((line) => line + CRLF).join('')}${CRLF}`, 'latin1'));
    chunks.push(p.text !== undefined ? Buffer.from(p.text) : p.content);
    chunks.push(Buffer.from(CRLF));
  }
  if (c.ending === 'close' || c.ending === 'epilogue' || c.ending === 'double-close') chunks.push(Buffer.from(`--${b}--${CRLF}`));
  if (c.ending === 'no-crlf') chunks.push(Buffer.from(`--${b}--`));
  if (c.ending === 'epilogue') chunks.push(Buffer.from('epilogue after the end\r\n'));
  if (c.ending === 'double-close') chunks.push(Buffer.from(`--${b}--${CRLF}`));
  let body: Buffer = Buffer.concat(chunks);
  const cut = c.cut !== undefined ? Math.floor(body.length * c.cut) : body.length;
  const sent = body.subarray(0, cut);

  const type = {
    plain: `multipart/form-data; boundary=${b}`,
    quoted: `multipart/form-data; boundary="${b}"`,
    missing: 'multipart/form-data',
    other: 'multipart/form-data; boundary=notTheBoundary',
    twice: `multipart/form-data; boundary=zz; boundary=${b}`,
    empty: 'multipart/form-data; boundary=',
    'uppercase-type': `MULTIPART/FORM-DATA; BOUNDARY=${b}`,
    'charset-first': `multipart/form-data; charset=utf-8; boundary=${b}`,
  }[c.typeForm];
  const { folder, file, archive } = fixture.ids;
  const target = {
    top: '/api_v1/targets/local/resources/',
    folder: `/api_v1/targets/local/resources/${folder}/`,
    file: `/api_v1/targets/local/resources/${file}/`,
    offline: `/api_v1/targets/offline/resources/${archive}/`,
    missing: '/api_v1/targets/local/resources/loc_bm9uZQ/',
  }[c.route];
  const headers = [
    `Host: 127.0.0.1:${fixture.ferry.port}`,
    `service-destination-token: ${fixture.ferry.key}`,
    `duplicate-file-action: ${c.action}`,
    `Content-Type: ${type}`,
  ];
  let payload: Buffer;
  if (c.framing === 'length') {
    // a cut body still announces its whole length: the server waits for the rest
    headers.push(`Content-Length: ${body.length}`);
    payload = sent;
  } else {
    headers.push('Transfer-Encoding: chunked');
    payload = Buffer.concat([
      ...(sent.length ? [Buffer.from(`${sent.length.toString(16)}${CRLF}`), sent, Buffer.from(CRLF)] : []),
      // a cut chunked body simply never ends
      ...(cut === body.length ? [Buffer.from(`0${CRLF}${CRLF}`)] : []),
    ]);
  }
  body = payload;
  const head = `POST ${target} HTTP/1.1${CRLF}${[...headers, 'Connection: close'].map((line) => line + CRLF).join('')}${CRLF}`;
  return { request: Buffer.concat([Buffer.from(head, 'latin1'), body]), complete: cut === sent.length && c.cut === undefined };
}

describe('hostile multipart bodies', () => {
  it(
    'boundaries, parts, part headers, sizes and truncation: JSON errors or a 202 for one real ZIP; nothing left behind',
    async () => {
      const tally = newTally();
      const jobsBefore = (await jobs(fixture)).length;
      await fuzzParallel(multipartCase, casesPer(400, 20_000), CONCURRENCY, async (c) => {
        const { request, complete } = build(c);
        const got = await probe(fixture, tally, { request, method: 'POST', expectAnswer: complete }, complete ? 20_000 : 400);
        const status = got.answers.at(-1)?.status;
        // a 202 only for a body that carried a whole ZIP in service-file to a folder or the top
        if (status === 202 && (c.route === 'file' || c.route === 'offline' || c.route === 'missing' || c.action === 'bogus')) {
          throw new Error(`202 for a ${c.route} upload with action ${c.action}`);
        }
      });
      await expectCleanAfter(fixture, jobsBefore, tally);
      figure('multipart bodies', tally);
    },
    modeTimeout(120_000, 3_600_000),
  );
});
