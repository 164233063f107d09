// Browser mode: the built renderer served at / (index.html, SPA fallback). No access key is
// needed for these files — the page reads the key from the URL fragment, which browsers
// never send — but the gate (Host, Origin) still applies, and every response carries the CSP.
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { notFoundBody } from './errors.js';

const API_PREFIXES = ['/api_v1/', '/api_v1', '/app/'];

export async function registerRenderer(app: FastifyInstance, rendererDir: string | null | undefined): Promise<void> {
  if (rendererDir) {
    await app.register(fastifyStatic, { root: rendererDir, prefix: '/', index: 'index.html', wildcard: true, schemaHide: true });
  }

  app.setNotFoundHandler((request, reply) => {
    const path = (request.raw.url ?? '/').split('?')[0] ?? '/';
    const isApi = API_PREFIXES.some((prefix) => path === prefix || path.startsWith(prefix));
    const wantsPage = request.method === 'GET' && (request.headers.accept ?? '').includes('text/html');
    if (rendererDir && !isApi && wantsPage) return reply.sendFile('index.html');
    return reply.code(404).type('application/json; charset=utf-8').send(notFoundBody(request.method, request.raw.url ?? '/'));
  });
}
