import { PassThrough, type Readable } from 'node:stream';
import { deflateRaw, deflateRawSync } from 'node:zlib';

// Deflating data that is already compressed burns CPU for nothing (and can grow it), so
// such files are STORED. The extension decides when it is telling; otherwise a sample of
// the first bytes is deflated quickly and the file is stored if that barely shrinks.

/** Formats whose bytes are already compressed (or encrypted-like), by lowercase extension. */
const INCOMPRESSIBLE_EXTENSIONS = new Set([
  // archives and compressed streams
  'zip', 'gz', 'tgz', 'bz2', 'tbz2', 'xz', 'txz', 'zst', 'lz4', 'lzma', '7z', 'rar', 'br', 'jar', 'war', 'whl', 'apk', 'nupkg', 'dmg',
  // images
  'jpg', 'jpeg', 'png', 'gif', 'webp', 'heic', 'heif', 'avif', 'jp2', 'jxl',
  // audio and video
  'mp3', 'mp4', 'm4a', 'm4v', 'mov', 'avi', 'mkv', 'webm', 'ogg', 'oga', 'ogv', 'opus', 'flac', 'aac', 'wma', 'wmv',
  // documents that are ZIPs or deflate inside
  'pdf', 'docx', 'xlsx', 'pptx', 'odt', 'ods', 'odp', 'epub', 'woff', 'woff2',
  // compressed scientific containers
  'npz', 'parquet', 'feather', 'arrow', 'rds', 'bam', 'cram',
]);

/**
 * Formats that are text, by lowercase extension: a small file so named is deflated without
 * sampling it first (the sample's entropy count cost ~1/8 of deflating a small text file).
 * A misnamed one costs only the wasted deflate: a small file's deflated bytes are kept only
 * when smaller. Not used for large files, whose deflate streams and cannot be taken back.
 */
const TEXT_EXTENSIONS = new Set([
  'txt', 'text', 'csv', 'tsv', 'tab', 'json', 'jsonl', 'ndjson', 'geojson', 'xml', 'html', 'htm', 'xhtml', 'svg', 'md', 'markdown', 'rst', 'log',
  'yaml', 'yml', 'toml', 'ini', 'cfg', 'conf', 'sql', 'tex', 'bib', 'rtf', 'css', 'js', 'mjs', 'ts', 'py', 'r', 'rmd', 'ipynb', 'c', 'h', 'cpp', 'hpp',
  'java', 'go', 'rs', 'rb', 'pl', 'sh', 'm', 'jl', 'f90', 'fasta', 'fa', 'fna', 'faa', 'fastq', 'fq', 'sam', 'vcf', 'gff', 'gff3', 'gtf', 'bed', 'pdb', 'cif', 'mtx',
]);

/** Bytes deflated to judge a file whose extension says nothing. */
export const SAMPLE_BYTES = 64 * 1024;

export function isIncompressibleByName(path: string): boolean {
  const name = path.slice(path.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  return dot > 0 && INCOMPRESSIBLE_EXTENSIONS.has(name.slice(dot + 1).toLowerCase());
}

export function isTextByName(path: string): boolean {
  const name = path.slice(path.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  return dot > 0 && TEXT_EXTENSIONS.has(name.slice(dot + 1).toLowerCase());
}

export function sampleCompresses(sample: Buffer): boolean {
  return sampleDecision(sample, deflateRawSync);
}

/**
 * sampleCompresses with the trial deflate (when the entropy test leaves one to do) on
 * libuv's thread pool: the event loop, which streams every download's bytes, never spends
 * a millisecond deflating a sample of a large file.
 */
export async function sampleCompressesOffThread(sample: Buffer): Promise<boolean> {
  let trial: Uint8Array | null = null;
  // a stand-in that "does not shrink": the decision is final unless a trial was asked for
  const withoutTrial = sampleDecision(sample, (bytes) => ((trial = bytes), bytes));
  if (trial === null) return withoutTrial;
  const deflated = await new Promise<Buffer>((resolve, reject) => deflateRaw(trial!, { level: 1 }, (error, result) => (error ? reject(error) : resolve(result))));
  return sampleDecision(sample, () => deflated);
}

/**
 * The STORE/DEFLATE decision on a sample. Text and most tabular data are decided without
 * deflating: when the bytes' own frequencies (order-0 entropy) already promise a quarter
 * off, Huffman coding alone gets there, so deflate certainly beats the 0.95 store
 * threshold. Anything else is test-deflated at level 1.
 *
 * The bag writer's compute threads run this very function too (compute/bag-work.ts).
 */
export function sampleDecision(sample: Uint8Array, deflate: (bytes: Uint8Array, options: { level: number }) => Uint8Array): boolean {
  const tinyFileBytes = 64; // too small to be worth a deflate stream's overhead
  const entropyMinBytes = 4096; // below this a Huffman table's own cost makes the bound unreliable
  const surelyCompressibleBits = 6;
  const storeAboveRatio = 0.95;
  if (sample.length < tinyFileBytes) return false;
  if (sample.length >= entropyMinBytes) {
    const counts = new Uint32Array(256);
    for (let i = 0; i < sample.length; i++) counts[sample[i]!]!++;
    let bits = 0;
    for (let b = 0; b < 256; b++) {
      const count = counts[b]!;
      if (count > 0) {
        const p = count / sample.length;
        bits -= p * Math.log2(p);
      }
    }
    if (bits < surelyCompressibleBits) return true;
  }
  return deflate(sample, { level: 1 }).length < sample.length * storeAboveRatio;
}

/** Shannon entropy of the byte frequencies, in bits per byte (0-8). */
export function bitsPerByte(bytes: Buffer): number {
  const counts = new Uint32Array(256);
  for (let i = 0; i < bytes.length; i++) counts[bytes[i]!]!++;
  let bits = 0;
  for (let b = 0; b < 256; b++) {
    const count = counts[b]!;
    if (count > 0) {
      const p = count / bytes.length;
      bits -= p * Math.log2(p);
    }
  }
  return bits;
}

export interface PeekedStream {
  /** the first bytes (up to the limit asked for; fewer only if the stream ended) */
  head: Buffer;
  /** a stream giving ALL the bytes again, head included: nothing is read twice */
  stream: Readable;
}

/**
 * Reads the first `limit` bytes of `source` and hands back a stream that replays them and
 * then continues with the rest of `source`. Errors of `source` reach the returned stream;
 * destroying the returned stream destroys `source`.
 */
export function peek(source: Readable, limit: number): Promise<PeekedStream> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    let ended = false;

    const onReadable = () => {
      let chunk: Buffer | null;
      while (length < limit && (chunk = source.read() as Buffer | null) !== null) {
        const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
        chunks.push(buffer);
        length += buffer.length;
      }
      if (length >= limit) finish();
    };
    const onEnd = () => {
      ended = true;
      finish();
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    const cleanup = () => {
      source.off('readable', onReadable);
      source.off('end', onEnd);
      source.off('error', onError);
    };
    const finish = () => {
      cleanup();
      const head = Buffer.concat(chunks, length);
      const out = new PassThrough();
      for (const chunk of chunks) out.write(chunk);
      if (ended) {
        out.end();
      } else {
        source.on('error', (error) => out.destroy(error));
        out.on('close', () => {
          if (!source.destroyed && !source.readableEnded) source.destroy();
        });
        source.pipe(out);
      }
      resolve({ head, stream: out });
    };

    source.on('readable', onReadable);
    source.on('end', onEnd);
    source.on('error', onError);
  });
}

/**
 * Decides STORE vs DEFLATE for one file: by name when telling, otherwise by sampling its
 * first bytes (read once; the returned stream replays them).
 */
export async function chooseCompression(path: string, source: Readable): Promise<{ compress: boolean; stream: Readable }> {
  if (isIncompressibleByName(path)) return { compress: false, stream: source };
  const { head, stream } = await peek(source, SAMPLE_BYTES);
  return { compress: sampleCompresses(head), stream };
}
