// Run by resume.test.ts in a child process it then kills (SIGKILL) mid-upload:
//   node --import tsx/loader direct-upload-child.ts <emulator url> <dataset id> <source file> <journal dir>
// Uploads the source file into the dataset by direct upload in parts, journaling each part.
import { createReadStream, statSync } from 'node:fs';
import { makeConfig } from '../../../config.js';
import { MemorySecretStore } from '../../../keychain/memory.js';
import { createDataverseTarget } from '../index.js';
import { datasetId } from '../ids.js';

const [url, dataset, source, journalDir] = process.argv.slice(2) as [string, string, string, string];
const target = createDataverseTarget(makeConfig({ dataDir: journalDir }), new MemorySecretStore(), { defaultUrl: url, ratePerSecond: 1000, retries: 0, directUploadBytes: 1, journalDir });
async function* entries() {
  yield { path: 'big.bin', kind: 'file' as const, size: statSync(source).size, mtime: null, hashes: {}, open: async () => createReadStream(source) };
}
await target.write({ token: 'dv-token-1111', signal: new AbortController().signal }, datasetId(Number(dataset)), entries(), { duplicateAction: 'ignore', signal: new AbortController().signal, jobLabel: 'child' });
console.log('finished');
