// The validators and serializers compiled at first use (lazy-compilers.ts) must accept, refuse
// and answer exactly as Fastify's own, compiled at the start, do: each case runs on two servers,
// one with Fastify's compilers and one with the lazy ones, and compares the answers.
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFerry, type Ferry } from '../../test/api/harness.js';
import { fastPathOn } from '../core/fast-paths.js';
import { attachLazyCompilers, compileEverySchema, LazyCompilers } from './lazy-compilers.js';

const shared = { $id: 'Item', type: 'object', required: ['name'], properties: { name: { type: 'string' }, size: { type: 'integer' } } };

function routes(app: FastifyInstance): FastifyInstance {
  app.addSchema(shared);
  app.post<{ Querystring: { n: number; flag?: boolean }; Body: { name: string; size?: number } }>(
    '/things/',
    {
      schema: {
        querystring: { type: 'object', required: ['n'], properties: { n: { type: 'integer', minimum: 1 }, flag: { type: 'boolean' } } },
        headers: { type: 'object', required: ['x-ferry-test'], properties: { 'x-ferry-test': { type: 'string', enum: ['yes'] } } },
        body: { $ref: 'Item#' },
        response: {
          200: { type: 'object', properties: { n: { type: 'integer' }, nType: { type: 'string' }, flag: { type: ['boolean', 'null'] }, item: { $ref: 'Item#' } } },
          400: { type: 'object', properties: { message: { type: 'string' }, code: { type: 'string' } } },
        },
      },
    },
    // what the handler sees of the query string is what Ajv coerced in place
    async (request) => ({ n: request.query.n, nType: typeof request.query.n, flag: request.query.flag ?? null, item: { ...request.body, dropped: 'not in the schema' }, alsoDropped: true }),
  );
  // a root value Ajv replaces (a lone string where an array is asked for): only with the parent given
  app.post<{ Body: string[] }>(
    '/list/',
    { schema: { body: { type: 'array', items: { type: 'string' } } } },
    async (request) => ({ isArray: Array.isArray(request.body), body: request.body }),
  );
  return app;
}

async function both(): Promise<{ eager: FastifyInstance; lazy: FastifyInstance; compilers: LazyCompilers }> {
  const compilers = new LazyCompilers();
  const lazy = routes(Fastify({ schemaController: { compilersFactory: compilers.factory } }));
  attachLazyCompilers(lazy, compilers);
  const eager = routes(Fastify());
  await Promise.all([eager.ready(), lazy.ready()]);
  return { eager, lazy, compilers };
}

describe('validators and serializers compiled at first use', () => {
  const requests = [
    { name: 'a valid request (query coerced, extra properties dropped)', url: '/things/?n=3&flag=true', headers: { 'x-ferry-test': 'yes' }, body: { name: 'a', size: 2 } },
    { name: 'a header spelled in capitals', url: '/things/?n=3', headers: { 'X-Ferry-Test': 'yes' }, body: { name: 'a' } },
    { name: 'a query value out of range', url: '/things/?n=0', headers: { 'x-ferry-test': 'yes' }, body: { name: 'a' } },
    { name: 'a query value of the wrong type', url: '/things/?n=many', headers: { 'x-ferry-test': 'yes' }, body: { name: 'a' } },
    { name: 'a missing header', url: '/things/?n=1', headers: {}, body: { name: 'a' } },
    { name: 'a header value not allowed', url: '/things/?n=1', headers: { 'x-ferry-test': 'no' }, body: { name: 'a' } },
    { name: 'a body missing a required property', url: '/things/?n=1', headers: { 'x-ferry-test': 'yes' }, body: { size: 1 } },
    { name: 'a body property of the wrong type, coerced', url: '/things/?n=1', headers: { 'x-ferry-test': 'yes' }, body: { name: 'a', size: '7' } },
    { name: 'a lone string where an array is asked for (the root coerced)', url: '/list/', headers: {}, body: 'one' },
  ];
  for (const request of requests) {
    it(`answers ${request.name} as Fastify's own compilers do`, async () => {
      const { eager, lazy } = await both();
      const answers = await Promise.all(
        [eager, lazy].map((app) => app.inject({ method: 'POST', url: request.url, headers: { ...request.headers, 'content-type': 'application/json' }, payload: JSON.stringify(request.body) })),
      );
      const [expected, got] = answers.map((answer) => ({ status: answer.statusCode, body: answer.body }));
      expect(got).toEqual(expected);
      await Promise.all([eager.close(), lazy.close()]);
    });
  }

  it('compiles nothing at the start, each function at its first use, and the rest on request', async () => {
    const { eager, lazy, compilers } = await both();
    const first = await lazy.inject({ method: 'POST', url: '/things/?n=2', headers: { 'x-ferry-test': 'yes' }, payload: { name: 'a' } });
    expect(JSON.parse(first.body)).toEqual({ n: 2, nType: 'number', flag: null, item: { name: 'a' } });
    // querystring, headers, body and the 200 serializer compiled by that request; its 400
    // serializer and the other route's body validator not yet
    expect(compilers.compileAll()).toBe(2);
    expect(compilers.compileAll()).toBe(0);
    await Promise.all([eager.close(), lazy.close()]);
  });

  it('refuses a headers schema that names a header in capitals when the route is declared', async () => {
    const compilers = new LazyCompilers();
    const app = Fastify({ schemaController: { compilersFactory: compilers.factory } });
    app.get('/h/', { schema: { headers: { type: 'object', required: ['X-Ferry-Test'], properties: { 'X-Ferry-Test': { type: 'string' } } } } }, async () => 'ok');
    await expect(app.ready()).rejects.toThrow(/headers schema of GET \/h\/ names X-Ferry-Test, X-Ferry-Test: write header names in lower case/);
  });

  it('leaves a schema its compiler refuses to the first use, and compileEverySchema finds it', async () => {
    const compilers = new LazyCompilers();
    const app = Fastify({ schemaController: { compilersFactory: compilers.factory } });
    attachLazyCompilers(app, compilers);
    app.get('/broken/', { schema: { response: { 500: { type: 'object', properties: { a: { $ref: 'Nowhere#' } } } } } }, async () => ({}));
    await app.ready();
    expect(() => compileEverySchema(app)).toThrow(/Nowhere/);
    await app.close();
  });
});

describe("Ferry's server", () => {
  let ferry: Ferry;
  beforeAll(async () => {
    ferry = await startFerry();
  });
  afterAll(async () => ferry?.close());

  it('has every validator and serializer of the contract compile', async () => {
    const { buildServer } = await import('./server.js');
    const app = await buildServer(ferry.core, { host: '127.0.0.1', port: 0, logger: false });
    await app.ready();
    if (fastPathOn('lazy-schemas')) {
      // hundreds of schemas (each route's requests and every status it may answer), none refused
      expect(compileEverySchema(app)).toBeGreaterThan(200);
    }
    // with the fast path off, Fastify compiled them all at ready() above
    expect(compileEverySchema(app)).toBe(0);
    await app.close();
  });
});
