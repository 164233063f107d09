// Ad-hoc: profile the server process (node --cpu-prof) during one bag download over HTTP.
// The server runs as `ferry serve` does, from the sources, with the launcher's memory settings
// (test/support/ferry-process.ts finds the server's own process behind the launcher).
// node --import tsx bench/profile-server.ts <workspace> <folder title> <out.zip> <profile dir>
import { createWriteStream } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { pipeline } from 'node:stream/promises';
import { startFerryProcess } from '../test/support/ferry-process.js';

const [workspace, folder, out, profileDir] = process.argv.slice(2) as [string, string, string, string];
const dataDir = await mkdtemp(path.join(os.tmpdir(), 'ferry-profile-'));
const server = await startFerryProcess({ dataDir, workspace, nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] });
const headers = { authorization: `Bearer ${server.accessKey}`, 'service-source-token': server.accessKey };
const listing = (await (await fetch(new URL('api_v1/targets/local/resources/?container=None', server.url), { headers })).json()) as { id: string; title: string }[];
const id = listing.find((resource) => resource.title === folder)!.id;
for (let round = 0; round < 2; round++) {
  const start = performance.now();
  const response = await fetch(new URL(`api_v1/targets/local/resources/${encodeURIComponent(id)}.zip/`, server.url), { headers });
  await pipeline(Readable.fromWeb(response.body as unknown as WebReadableStream), createWriteStream(out));
  console.log(`download ${((performance.now() - start) / 1000).toFixed(3)} s`);
}
// SIGINT: the server stops as on Ctrl-C, so node writes its profiles
server.child.kill('SIGINT');
await server.exited;
