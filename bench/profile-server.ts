// Ad-hoc: profile the server process (node --cpu-prof) during one bag download over HTTP.
// node --import tsx bench/profile-server.ts <workspace> <folder title> <out.zip> <profile dir>
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { pipeline } from 'node:stream/promises';

const [workspace, folder, out, profileDir] = process.argv.slice(2) as [string, string, string, string];
const dataDir = await mkdtemp(path.join(os.tmpdir(), 'ferry-profile-'));
const child = spawn(process.execPath, [`--cpu-prof`, `--cpu-prof-dir=${profileDir}`, '--import', 'tsx', path.resolve('electron/cli.ts'), 'serve', '--port', '0', '--data-dir', dataDir, '--workspace', workspace], { stdio: 'ignore' });
let endpoint: { url: string; access_key: string; pid: number } | null = null;
while (!endpoint) {
  await new Promise((resolve) => setTimeout(resolve, 100));
  try {
    const found = JSON.parse(await readFile(path.join(dataDir, 'endpoint.json'), 'utf8'));
    if (found.pid === child.pid) endpoint = found;
  } catch {
    // not yet
  }
}
const headers = { authorization: `Bearer ${endpoint.access_key}`, 'service-source-token': endpoint.access_key };
const listing = (await (await fetch(new URL('api_v1/targets/local/resources/?container=None', endpoint.url), { headers })).json()) as { id: string; title: string }[];
const id = listing.find((resource) => resource.title === folder)!.id;
for (let round = 0; round < 2; round++) {
  const start = performance.now();
  const response = await fetch(new URL(`api_v1/targets/local/resources/${encodeURIComponent(id)}.zip/`, endpoint.url), { headers });
  await pipeline(Readable.fromWeb(response.body as unknown as WebReadableStream), createWriteStream(out));
  console.log(`download ${((performance.now() - start) / 1000).toFixed(3)} s`);
}
child.kill('SIGINT');
await new Promise((resolve) => child.on('exit', resolve));
