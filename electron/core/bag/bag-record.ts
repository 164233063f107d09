import yauzl from 'yauzl';
import { PROVENANCE_FILE } from '../provenance/format.js';

// The provenance record an uploaded bag carries: Ferry's bags hold it as a tag file at the
// bag's top (beside bagit.txt), outside the payload the upload reader hands the writer. It is
// read here from the spooled ZIP so the upload's record extends it instead of starting anew.

/** a record bigger than this is not one Ferry wrote; it is not read */
const MAX_RECORD_BYTES = 64 * 1024 * 1024;

/** The text of `<bag>/ferry-provenance.json` of a zipped bag, or null when it has none. */
export async function carriedInBagZip(zipPath: string): Promise<string | null> {
  const zip = await yauzl.openPromise(zipPath, { lazyEntries: true, autoClose: false });
  try {
    const records = new Map<string, yauzl.Entry>();
    const bagits = new Set<string>();
    await new Promise<void>((resolve, reject) => {
      zip.on('entry', (entry: yauzl.Entry) => {
        const match = /^([^/]+\/)?([^/]+)$/.exec(entry.fileName);
        if (match?.[2] === PROVENANCE_FILE) records.set(match[1] ?? '', entry);
        if (match?.[2] === 'bagit.txt') bagits.add(match[1] ?? '');
        zip.readEntry();
      });
      zip.once('end', () => resolve());
      zip.once('error', reject);
      zip.readEntry();
    });
    const root = [...bagits].find((candidate) => records.has(candidate));
    if (root === undefined) return null;
    const entry = records.get(root)!;
    if (entry.uncompressedSize > MAX_RECORD_BYTES) return null;
    const stream = await zip.openReadStreamPromise(entry);
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  } finally {
    zip.close();
  }
}
