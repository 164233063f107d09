// The hostile JSON transfer body (issue #9 part 2): wrong types, missing and extra fields,
// huge numbers, deep nesting, `__proto__` / `constructor` keys, unicode, invalid JSON,
// charsets and media-type spellings, over 1 MiB — to every POST that takes a transfer.
// Every answer is a JSON error of API.md's shape or a 202 for a real source; no job is made
// for a refused body (hostile.ts), and Object.prototype is never polluted.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { modeTimeout } from '../../support/stress.js';
import { CONCURRENCY, CRLF, casesPer, expectCleanAfter, figure, fuzzParallel, jobs, newTally, probe, startFixture, type Fixture } from './hostile.js';

let fixture: Fixture;
beforeAll(async () => {
  fixture = await startFixture();
});
afterAll(async () => fixture?.close());

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64url');

function jsonCase(f: Fixture) {
  const realId = fc.constantFrom(f.ids.file, f.ids.archive);
  const name = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom('local', 'offline') },
    { weight: 2, arbitrary: fc.constantFrom('', ' local', 'LOCAL', 'local\u0000', '__proto__', 'constructor', 'toString', 'hasOwnProperty', '../local', 'lo%63al', 'zenodo', 'x'.repeat(5000)) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
  );
  const id = fc.oneof(
    { weight: 4, arbitrary: realId },
    { weight: 2, arbitrary: fc.constantFrom('', '.', '..', 'None', 'loc_', 'zip_', `loc_${b64('..')}`, `loc_${b64('../outside')}`, `loc_${b64('/etc/passwd')}`, `loc_${b64('Data/a.txt\0')}`, '%2e%2e', 'x'.repeat(20_000)) },
    { weight: 1, arbitrary: realId.map((real) => `${real}.json`) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 30 }) },
  );
  const wrongType = fc.oneof(
    fc.constantFrom(null, true, false, 0, -1, 1.5, 1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, [], {}, [[]], ['local'], ['local', 'offline'], { toString: 'local' }),
    fc.bigInt({ min: -(10n ** 400n), max: 10n ** 400n }).map((n) => ({ __raw: n.toString() })),
  );
  const field = <T>(good: fc.Arbitrary<T>) =>
    fc.oneof({ weight: 5, arbitrary: good.map((value) => ({ value })) }, { weight: 1, arbitrary: wrongType.map((value) => ({ value })) }, { weight: 1, arbitrary: fc.constant(undefined) });
  const extraKey = fc.oneof(
    fc.constantFrom('__proto__', 'constructor', 'prototype', 'source_target_name', 'polluted', '', ' ', '\u0000', 'source_resource_id '),
    fc.string({ unit: 'grapheme', maxLength: 12 }),
  );
  const extraValue = fc.oneof(
    fc.jsonValue({ maxDepth: 3 }),
    fc.constant({ polluted: 'yes' }),
    fc.constant({ prototype: { polluted: 'yes' } }),
    fc.integer({ min: 1, max: 60_000 }).map((depth) => ({ __raw: `${'['.repeat(depth)}${']'.repeat(depth)}` })),
    fc.integer({ min: 1, max: 60_000 }).map((depth) => ({ __raw: `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}` })),
  );
  return fc.record({
    route: fc.constantFrom('top', 'folder', 'folder', 'file', 'offline', 'missing'),
    body: fc.oneof(
      { weight: 8, arbitrary: fc.record({ target: field(name), id: field(id), extras: fc.array(fc.tuple(extraKey, extraValue), { maxLength: 3 }), order: fc.boolean() }) },
      { weight: 1, arbitrary: fc.oneof(fc.jsonValue({ maxDepth: 4 }), wrongType).map((value) => ({ whole: value })) },
      { weight: 1, arbitrary: fc.constantFrom(
        '', ' ', '{', '}', '{"source_target_name":"local",}', "{'source_target_name':'local'}", '{"source_target_name":"local","source_resource_id":NaN}',
        '/* c */{}', '\ufeff{}', '{"a":1}{"b":2}', 'null', '"str"', '[]', '{"source_target_name":"local","source_resource_id":"\\ud800"}',
        '{"source_target_name":"local","source_resource_id":"x\\u0000"}', '{"__proto__":{"polluted":1}}', '{"constructor":{"prototype":{"polluted":1}}}',
        `{"source_target_name":"${'a'.repeat(1_200_000)}"}`, '\u0000', '{"a":"\\x"}', '{"a":1e99999}', '{"a":-0}', `[${'1,'.repeat(100_000)}1]`,
      ).map((text) => ({ text })) },
    ),
    contentType: fc.constantFrom('application/json', 'application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON', 'application/json; charset=latin1', 'application/json; charset=utf-16', 'application/json;', 'application/json ; x=y', 'application/vnd.api+json', 'application/json, text/plain'),
    encoding: fc.oneof({ weight: 8, arbitrary: fc.constant('utf8') }, { weight: 1, arbitrary: fc.constantFrom('utf16le', 'latin1') }),
    action: fc.constantFrom('ignore', 'ignore', 'update', 'skip', ''),
  });
}

type JsonCase = ReturnType<typeof jsonCase> extends fc.Arbitrary<infer T> ? T : never;

/** JSON text with `{__raw}` placeholders spliced in as-is (big integers, deep nesting). */
function stringify(value: unknown): string {
  const raws: string[] = [];
  const text = JSON.stringify(value, (_key, v: unknown) => {
    if (v && typeof v === 'object' && '__raw' in v) {
      raws.push(String((v as { __raw: unknown }).__raw));
      return `\u0001RAW${raws.length - 1}\u0001`;
    }
    return v;
  });
  return (text ?? 'undefined').replace(/"\\u0001RAW(\d+)\\u0001"/g, (_m, i: string) => raws[Number(i)]!);
}

function bodyText(c: JsonCase): string {
  const body = c.body;
  if ('text' in body) return body.text;
  if ('whole' in body) return stringify(body.whole);
  const members: string[] = [];
  const add = (key: string, value: unknown) => members.push(`${JSON.stringify(key)}:${stringify(value)}`);
  const fields: Array<[string, { value: unknown } | undefined]> = [['source_target_name', body.target], ['source_resource_id', body.id]];
  if (body.order) fields.reverse();
  for (const [key, field] of fields) if (field) add(key, field.value);
  // extra members written by hand: JSON.stringify would drop a literal __proto__ key's meaning
  for (const [key, value] of body.extras) add(key, value);
  return `{${members.join(',')}}`;
}

describe('hostile JSON transfer bodies', () => {
  it(
    'wrong types, missing/extra fields, huge numbers, deep nesting, __proto__, unicode, bad JSON: JSON errors or a 202 for a real source',
    async () => {
      const tally = newTally();
      const jobsBefore = (await jobs(fixture)).length;
      const { folder, file, archive } = fixture.ids;
      await fuzzParallel(jsonCase(fixture), casesPer(500, 30_000), CONCURRENCY, async (c) => {
        const target = {
          top: '/api_v1/targets/local/resources/',
          folder: `/api_v1/targets/local/resources/${folder}/`,
          file: `/api_v1/targets/local/resources/${file}/`,
          offline: `/api_v1/targets/offline/resources/${archive}/`,
          missing: '/api_v1/targets/local/resources/loc_bm9uZQ/',
        }[c.route];
        const body = Buffer.from(bodyText(c), c.encoding as BufferEncoding);
        const headers = [
          `Host: 127.0.0.1:${fixture.ferry.port}`,
          `service-source-token: ${fixture.ferry.key}`,
          `service-destination-token: ${fixture.ferry.key}`,
          ...(c.action ? [`duplicate-file-action: ${c.action}`] : []),
          `Content-Type: ${c.contentType}`,
          `Content-Length: ${body.length}`,
          'Connection: close',
        ];
        const head = `POST ${target} HTTP/1.1${CRLF}${headers.map((line) => line + CRLF).join('')}${CRLF}`;
        const got = await probe(fixture, tally, { request: Buffer.concat([Buffer.from(head, 'latin1'), body]), method: 'POST', expectAnswer: true }, 20_000);
        const status = got.answers.at(-1)!.status;
        if (status === 202 && !(c.route === 'top' || c.route === 'folder')) throw new Error(`202 for a transfer into ${c.route}`);
        expect(({} as Record<string, unknown>).polluted, 'Object.prototype polluted').toBeUndefined();
      });
      await expectCleanAfter(fixture, jobsBefore, tally);
      figure('JSON transfer bodies', tally);
    },
    modeTimeout(90_000, 3_600_000),
  );
});
