// The fast paths Ferry takes where people wait, each one named, so each can be switched off
// and the byte-exactness tests run once more with all of them off (docs/performance.md lists
// what each relies on and the bench row that justifies it). A fast path never changes what is
// written or reported, only how fast: with every one off Ferry writes the same bytes.
//
// FERRY_FAST_PATHS (read once, at the first question):
//   unset or ""        every fast path on
//   "off"              every fast path off
//   "-name,-name2"     those off, the rest on

export const FAST_PATHS = [
  /** @node-rs/crc32 (PCLMULQDQ) for CRC-32, instead of zlib's table-driven one */
  'native-crc32',
  /** the local target's remembered md5/sha256, taken by a download while the CRC-32 of the bytes read matches */
  'remembered-digests',
  /** a download's bag workers open local files themselves (O_NOFOLLOW), large ones read straight into shared slots */
  'direct-file-reads',
  /** the next few small local files are read while the current one is consumed */
  'read-ahead',
  /** a folder's lstat calls run synchronously while a run of them is quick */
  'sync-lstat',
  /** a local folder's listing rows, and their JSON, are kept while the folder's inode and ctime stay the same */
  'kept-listings',
  /** a small file passes from reader to writer as one buffer with its digests, not a stream */
  'whole-small-files',
  /** a bag upload to a staging target checks its manifests while the files are staged, not in a pass before */
  'staged-bag-check',
  /** the offline library's listing goes to the HTTP layer as columns, not row objects */
  'columnar-listing',
  /** a remote write keeps several files in flight (its target's TargetInfo.concurrency), results in entry order (jobs/ordered-pipeline.ts); the provenance record asks as many details at once */
  'parallel-writes',
  /** a job's fixity check takes its digests from the provenance record's hasher upstream, so each byte is hashed once */
  'shared-hashing',
  /** a local write's resume-journal marks wait for one syncfs of the destination's file system (`sync -f`, Linux), not an fsync of each file (targets/local/durable-marks.ts) */
  'syncfs-marks',
  /** a small local file is read (and hashed) on a file worker thread in one hop, not by promise fs calls on the main thread (jobs/file-write-workers.ts) */
  'worker-reads',
  /** a small local file's read buffer moves to its file-write worker thread (a transfer), not a copy of it (jobs/file-write-workers.ts) */
  'moved-file-bytes',
  /** a large local file (or stored ZIP entry) is read into a few buffers that the local writer, or an upload's request, gives back once written, not a fresh buffer a chunk (read-buffers.ts) */
  'reused-read-buffers',
  /** a folder's new files go to one file-write worker thread while any is under way, and other folders' to the other (jobs/file-write-workers.ts) */
  'folder-lanes',
  /** a write to an InvenioRDM draft declares the keys of up to 16 new files in one `POST …/draft/files`, not one request a file (targets/invenio/invenio-target.ts) */
  'declare-batches',
  /** a WebDAV file goes in one PUT straight onto its name, not a PUT to a temporary name and a MOVE, on a server known to write a PUT atomically (targets/webdav/server-traits.ts) */
  'direct-puts',
  /** a WebDAV write lists each folder whose files are all written while its later files are under way, not every folder after the last file (remote/finished-folders.ts) */
  'early-listings',
  /** a request without a body (GET, HEAD, DELETE) goes over node:http, not ky and fetch, and a download's answer stays a Node stream (remote/node-answer.ts) */
  'direct-requests',
  /** a small file from a streamed source (a download) is gathered whole, then written on a file-write worker thread in one hop (targets/local/writer.ts) */
  'gathered-small-files',
  /** the server compiles each request validator and response serializer at its first use, not every one at the start (server/lazy-compilers.ts) */
  'lazy-schemas',
] as const;

export type FastPath = (typeof FAST_PATHS)[number];

let disabled: ReadonlySet<string> | null = null;

/** Parses a FERRY_FAST_PATHS value into the set of fast paths it turns off; throws on an unknown name. */
export function parseFastPathSetting(value: string | undefined): ReadonlySet<FastPath> {
  const text = (value ?? '').trim();
  if (text === '') return new Set();
  if (text === 'off') return new Set(FAST_PATHS);
  const off = new Set<FastPath>();
  for (const part of text.split(',').map((item) => item.trim()).filter(Boolean)) {
    const name = part.startsWith('-') ? part.slice(1) : part;
    if (!(FAST_PATHS as readonly string[]).includes(name)) {
      throw new Error(`FERRY_FAST_PATHS names '${name}', which is not a fast path; known: ${FAST_PATHS.join(', ')} (or "off" for all).`);
    }
    off.add(name as FastPath);
  }
  return off;
}

/** Whether `name` is on in this process. */
export function fastPathOn(name: FastPath): boolean {
  disabled ??= parseFastPathSetting(process.env.FERRY_FAST_PATHS);
  return !disabled.has(name);
}
