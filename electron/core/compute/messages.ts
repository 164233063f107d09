// The messages between Ferry's compute threads (compute/compute-worker.ts) and the pools
// that use them: one type each way (ToCompute, FromCompute), checked on both sides by the
// compiler. Types only: the worker's bundle takes nothing from here at run time.

// ---- the file-write pool (jobs/file-write-workers.ts): a batch of requests, a batch of replies

/** A new file written whole (O_EXCL|O_NOFOLLOW), maybe renamed into place in the same hop. */
export interface WriteRequest {
  op: 'write';
  id: number;
  path: string;
  /** moved to the thread (transferred); its first `length` bytes are the file */
  bytes: ArrayBuffer;
  length: number;
  /** seconds since the epoch */
  atime: number;
  mtime: number | null;
  sync: boolean;
  placeAt: string | null;
}

/** A small local file read whole (not followed if a link) and hashed. */
export interface ReadRequest {
  op: 'read';
  id: number;
  path: string;
  expectedSize: number;
  algorithms: readonly string[];
}

/** One small ZIP entry read (its local header at `headerAt`), inflated when deflated, hashed. */
export interface ReadZipEntryRequest {
  op: 'readZipEntry';
  id: number;
  path: string;
  headerAt: number;
  compressedSize: number;
  uncompressedSize: number;
  /** 0 stored, 8 deflated */
  method: number;
  algorithms: readonly string[];
  crc: boolean;
}

/** An fsync of each path (files or folders). */
export interface SyncRequest {
  op: 'sync';
  id: number;
  paths: readonly string[];
}

/** Each [from, to] renamed, on its own. */
export interface RenamesRequest {
  op: 'renames';
  id: number;
  pairs: readonly (readonly [string, string])[];
}

export type FileRequest = WriteRequest | ReadRequest | ReadZipEntryRequest | SyncRequest | RenamesRequest;

/** An error as Node's fs threw it on the thread, carried as plain fields. */
export interface WorkerError {
  code?: string;
  errno?: number;
  syscall?: string;
  message: string;
}

/**
 * A reply, matched to its request by `id`: an error, or (a write) the file's stat and whether
 * it was put in place, or (a read) its bytes, moved back, and digests, or (renames) each
 * pair's error.
 */
export interface FileReply {
  id: number;
  error?: WorkerError | null;
  errors?: (WorkerError | null)[];
  placeError?: WorkerError | null;
  bytes?: ArrayBuffer;
  length?: number;
  hashes?: Record<string, string>;
  crc32?: number | null;
  size?: bigint;
  mtimeNs?: bigint;
  ino?: bigint;
}

// ---- the hash pool (hashing.ts): one stream's digests, its bytes in a shared ring

export type HashRequest =
  /** a view of a ring's shared memory, given once per thread */
  | { kind: 'hash'; op: 'ring'; ring: number; buffer: SharedArrayBuffer }
  | { kind: 'hash'; op: 'start'; id: number; algorithms: readonly string[] }
  /** hash `length` bytes of the ring at `offset`, then acknowledge the slot */
  | { kind: 'hash'; op: 'update'; id: number; ring: number; slot: number; offset: number; length: number }
  | { kind: 'hash'; op: 'digest'; id: number }
  | { kind: 'hash'; op: 'drop'; id: number };

export type HashReply =
  | { kind: 'hash'; op: 'ack'; ring: number; slot: number }
  /** null: the thread knew no such stream */
  | { kind: 'hash'; op: 'digest'; id: number; hex: Record<string, string> | null };

// ---- the bag pool (bag/bag-workers.ts): batches of small files, large files through rings

/** One file (or folder) of a batch, as the thread needs it. */
export interface BagBatchFile {
  name: string;
  folder: boolean;
  /** a local file the thread reads itself (O_NOFOLLOW, regular files only), else null */
  path: string | null;
  /** where its bytes start in the batch's `data` (no `path`) */
  start: number;
  /** its length in `data`, or its listed size (a `path`) */
  length: number;
  dosTime: number;
  dosDate: number;
  algorithms: readonly string[];
  /** digests to compute only when the bytes' CRC-32 is not `crc32` */
  recheck: { crc32: number; algorithms: readonly string[] } | null;
  /** deflate level; 0 stores */
  level: number;
  /** sample the bytes to decide STORE or DEFLATE */
  decide: boolean;
}

/** What the thread made of one file of a batch. */
export interface BagBatchResult {
  hashes: Record<string, string> | null;
  crc: number;
  method: number;
  compressedSize: number;
  size: number;
  /** bytes of this file's local header + data in the batch's records */
  recordBytes: number;
  /** set when the thread could not read a `path` file (no other field is then): the batch ends there */
  error?: { code: string | null; message: string } | null;
}

export type BagRequest =
  /** where to require the native CRC-32 from (core/crc32.ts), sent once to each thread; null: zlib's */
  | { kind: 'bag'; op: 'crc32'; modulePath: string | null }
  /** `data` (transferred) holds the bytes of the files without a `path` */
  | { kind: 'bag'; op: 'batch'; id: number; data: ArrayBuffer | null; estimate: number; files: BagBatchFile[] }
  | { kind: 'bag'; op: 'ring'; ring: number; buffer: SharedArrayBuffer }
  | { kind: 'bag'; op: 'open'; id: number; algorithms: readonly string[]; crc: boolean; level: number }
  | { kind: 'bag'; op: 'chunk'; id: number; ring: number; slot: number; offset: number; length: number }
  | { kind: 'bag'; op: 'close'; id: number }
  | { kind: 'bag'; op: 'drop'; id: number };

export type BagReply =
  /** the local header and data of every file, in order, ready to write (its first `length` bytes) */
  | { kind: 'bag'; op: 'batch'; id: number; data: ArrayBuffer; length: number; results: BagBatchResult[] }
  | { kind: 'bag'; op: 'ack'; id: number; ring: number; slot: number }
  /** deflated bytes of a large file, in order */
  | { kind: 'bag'; op: 'data'; id: number; data: ArrayBuffer }
  /** null hashes: the thread knew no such stream */
  | { kind: 'bag'; op: 'closed'; id: number; hashes: Record<string, string> | null; crc: number | null };

// ---- the one type each way

export type ToCompute = { kind: 'files'; batch: FileRequest[] } | HashRequest | BagRequest;
export type FromCompute = { kind: 'files'; replies: FileReply[] } | HashReply | BagReply;
