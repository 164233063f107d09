// The reference for API overhead: a bare Fastify route returning a payload like
// GET /api_v1/targets/, in its own process as Ferry's server is. Prints its URL.
import Fastify from 'fastify';

const targets = ['local', 'offline', 'osf', 'github', 'gitlab', 'zenodo', 'figshare', 'webdav'].map((name) => ({
  name,
  readable_name: name,
  supported_actions: { resource_collection: true, resource_detail: true, resource_download: true, resource_upload: true },
  supported_hash_algorithms: ['md5', 'sha256'],
  detail: `http://127.0.0.1/api_v1/target/${name}/`,
}));
const app = Fastify({ logger: false });
app.get('/api_v1/targets/', async () => targets);
await app.listen({ host: '127.0.0.1', port: 0 });
const { port } = app.server.address();
console.log(`http://127.0.0.1:${port}/`);
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => app.close().then(() => process.exit(0)));
