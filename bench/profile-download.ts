// Ad-hoc: time (and with --cpu-prof, profile) one bag download of a local folder, in process.
import { createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { performance } from 'node:perf_hooks';
import { LocalTarget, encodeLocalId } from '../electron/core/targets/local/index.js';
import { writeBagZip, bagNameFor } from '../electron/core/zip/bag-writer.js';

const [root, folder, out] = process.argv.slice(2) as [string, string, string];
const target = new LocalTarget({ root });
const ctx = { token: '', signal: new AbortController().signal };
const start = performance.now();
const read = await target.read(ctx, encodeLocalId(folder));
await pipeline(writeBagZip(read, { targetName: 'local', resourceId: 'x', bagName: bagNameFor('local', 'x') }), createWriteStream(out));
console.log(`${((performance.now() - start) / 1000).toFixed(3)} s`);
