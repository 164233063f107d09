// The ZIP records a bag is written with (APPNOTE 6.3; the same bytes yazl 3 wrote before,
// so every reader that read Ferry's bags reads them still): UTF-8 names, Unix modes, an
// Info-ZIP extended timestamp in the central directory, data descriptors for entries whose
// CRC and sizes are known only after their bytes, and ZIP64 fields only where needed.
//
// The local header of a file read whole is built on a compute thread with its data
// (compute/bag-work.ts, by writeLocalHeader, with CRC and sizes filled in and no
// data-descriptor flag); this module builds the rest on the main thread. The one writer of
// ZIP records in Ferry.

export const LOCAL_HEADER_BYTES = 30;
const CENTRAL_RECORD_BYTES = 46;
const TIMESTAMP_EXTRA_BYTES = 9;
const ZIP64_EXTRA_BYTES = 28;
const VERSION_NEEDED_UTF8 = 20;
const VERSION_NEEDED_ZIP64 = 45;
const VERSION_MADE_BY = (3 << 8) | 63; // Unix, spec 6.3
export const FLAG_UTF8 = 1 << 11;
export const FLAG_DATA_DESCRIPTOR = 1 << 3;
export const METHOD_STORE = 0;
export const METHOD_DEFLATE = 8;
const MAX_32 = 0xfffffffe;

/** What the central directory needs to know of one entry once its bytes are written. */
export interface CentralRecord {
  name: Buffer;
  flags: number;
  method: number;
  dosTime: number;
  dosDate: number;
  crc: number;
  compressedSize: number;
  size: number;
  /** file type and permission bits (st_mode) */
  mode: number;
  /** seconds since the epoch, for the extended timestamp */
  unixTime: number;
  offset: number;
}

/** MS-DOS date and time in local time (as Info-ZIP and yazl write them), clamped to 1980-2107. */
export function dosDateTime(date: Date): { dosTime: number; dosDate: number } {
  let d = date;
  if (d < MIN_DOS_DATE) d = MIN_DOS_DATE;
  else if (d > MAX_DOS_DATE) d = MAX_DOS_DATE;
  return {
    dosDate: (d.getDate() & 0x1f) | (((d.getMonth() + 1) & 0xf) << 5) | (((d.getFullYear() - 1980) & 0x7f) << 9),
    dosTime: Math.floor(d.getSeconds() / 2) | ((d.getMinutes() & 0x3f) << 5) | ((d.getHours() & 0x1f) << 11),
  };
}
const MIN_DOS_DATE = new Date(1980, 0, 1);
const MAX_DOS_DATE = new Date(2107, 11, 31, 23, 59, 58);

/**
 * A ZIP entry name: forward slashes, relative, no '..' segment (a ZIP reader would write
 * outside its folder); folders end in '/'.
 */
export function zipEntryName(path: string, isFolder: boolean): Buffer {
  if (path === '' || /^[a-zA-Z]:/.test(path) || path.startsWith('/')) throw new Error(`The name '${path}' cannot go into a ZIP: it is empty or absolute.`);
  if (path.split('/').includes('..')) throw new Error(`The name '${path}' cannot go into a ZIP: it has a '..' segment.`);
  const name = Buffer.from(isFolder && !path.endsWith('/') ? `${path}/` : path, 'utf8');
  if (name.length > 0xffff) throw new Error(`The name '${path.slice(0, 80)}…' is too long for a ZIP entry.`);
  return name;
}

/** A local header whose CRC and sizes come later, in a data descriptor. */
export function streamedLocalHeader(name: Buffer, method: number, dosTime: number, dosDate: number): Buffer {
  const header = Buffer.alloc(LOCAL_HEADER_BYTES + name.length);
  // CRC and sizes stay 0
  writeLocalHeader(header, 0, FLAG_UTF8 | FLAG_DATA_DESCRIPTOR, method, dosTime, dosDate, 0, 0, 0, name);
  return header;
}

/**
 * The one writer of a local file header (and its name) into `out` at `at`: for streamed
 * entries here, and on the compute threads for files read whole (compute/bag-work.ts).
 * Version needed 2.0, as every entry Ferry writes is UTF-8-named.
 */
export function writeLocalHeader(out: Buffer, at: number, flags: number, method: number, dosTime: number, dosDate: number, crc: number, compressedSize: number, size: number, name: Buffer): void {
  out.writeUInt32LE(0x04034b50, at);
  out.writeUInt16LE(20, at + 4);
  out.writeUInt16LE(flags, at + 6);
  out.writeUInt16LE(method, at + 8);
  out.writeUInt16LE(dosTime, at + 10);
  out.writeUInt16LE(dosDate, at + 12);
  out.writeUInt32LE(crc >>> 0, at + 14);
  out.writeUInt32LE(compressedSize, at + 18);
  out.writeUInt32LE(size, at + 22);
  out.writeUInt16LE(name.length, at + 26);
  out.writeUInt16LE(0, at + 28);
  name.copy(out, at + 30);
}

export function dataDescriptor(crc: number, compressedSize: number, size: number): Buffer {
  const zip64 = compressedSize > MAX_32 || size > MAX_32;
  const descriptor = Buffer.alloc(zip64 ? 24 : 16);
  descriptor.writeUInt32LE(0x08074b50, 0);
  descriptor.writeUInt32LE(crc >>> 0, 4);
  if (zip64) {
    descriptor.writeBigUInt64LE(BigInt(compressedSize), 8);
    descriptor.writeBigUInt64LE(BigInt(size), 16);
  } else {
    descriptor.writeUInt32LE(compressedSize, 8);
    descriptor.writeUInt32LE(size, 12);
  }
  return descriptor;
}

function needsZip64(record: CentralRecord): boolean {
  return record.size > MAX_32 || record.compressedSize > MAX_32 || record.offset > MAX_32;
}

/** The central directory followed by its end records, written at `offset`, in one buffer. */
export function centralDirectory(records: readonly CentralRecord[], offset: number): Buffer {
  let length = 0;
  for (const record of records) length += CENTRAL_RECORD_BYTES + record.name.length + TIMESTAMP_EXTRA_BYTES + (needsZip64(record) ? ZIP64_EXTRA_BYTES : 0);
  const directorySize = length;
  const zip64End = records.length >= 0xffff || directorySize > MAX_32 || offset > MAX_32;
  const out = Buffer.alloc(length + (zip64End ? 56 + 20 : 0) + 22);
  let at = 0;
  for (const record of records) {
    const zip64 = needsZip64(record);
    out.writeUInt32LE(0x02014b50, at);
    out.writeUInt16LE(VERSION_MADE_BY, at + 4);
    out.writeUInt16LE(zip64 ? VERSION_NEEDED_ZIP64 : VERSION_NEEDED_UTF8, at + 6);
    out.writeUInt16LE(record.flags, at + 8);
    out.writeUInt16LE(record.method, at + 10);
    out.writeUInt16LE(record.dosTime, at + 12);
    out.writeUInt16LE(record.dosDate, at + 14);
    out.writeUInt32LE(record.crc >>> 0, at + 16);
    out.writeUInt32LE(zip64 ? 0xffffffff : record.compressedSize, at + 20);
    out.writeUInt32LE(zip64 ? 0xffffffff : record.size, at + 24);
    out.writeUInt16LE(record.name.length, at + 28);
    out.writeUInt16LE(TIMESTAMP_EXTRA_BYTES + (zip64 ? ZIP64_EXTRA_BYTES : 0), at + 30);
    // comment length, disk number, internal attributes: 0
    out.writeUInt32LE(((record.mode & 0xffff) << 16) >>> 0, at + 38);
    out.writeUInt32LE(zip64 ? 0xffffffff : record.offset, at + 42);
    at += CENTRAL_RECORD_BYTES;
    record.name.copy(out, at);
    at += record.name.length;
    // Info-ZIP extended timestamp: mtime (the atime flag set as Info-ZIP does, no atime field)
    out.writeUInt16LE(0x5455, at);
    out.writeUInt16LE(TIMESTAMP_EXTRA_BYTES - 4, at + 2);
    out.writeUInt8(0b11, at + 4);
    out.writeInt32LE(Math.min(0x7fffffff, Math.max(-0x80000000, record.unixTime)), at + 5);
    at += TIMESTAMP_EXTRA_BYTES;
    if (zip64) {
      out.writeUInt16LE(0x0001, at);
      out.writeUInt16LE(ZIP64_EXTRA_BYTES - 4, at + 2);
      out.writeBigUInt64LE(BigInt(record.size), at + 4);
      out.writeBigUInt64LE(BigInt(record.compressedSize), at + 12);
      out.writeBigUInt64LE(BigInt(record.offset), at + 20);
      at += ZIP64_EXTRA_BYTES;
    }
  }
  if (zip64End) {
    const zip64RecordOffset = offset + directorySize;
    out.writeUInt32LE(0x06064b50, at);
    out.writeBigUInt64LE(44n, at + 4);
    out.writeUInt16LE(VERSION_MADE_BY, at + 12);
    out.writeUInt16LE(VERSION_NEEDED_ZIP64, at + 14);
    // disk numbers: 0
    out.writeBigUInt64LE(BigInt(records.length), at + 24);
    out.writeBigUInt64LE(BigInt(records.length), at + 32);
    out.writeBigUInt64LE(BigInt(directorySize), at + 40);
    out.writeBigUInt64LE(BigInt(offset), at + 48);
    at += 56;
    out.writeUInt32LE(0x07064b50, at);
    out.writeBigUInt64LE(BigInt(zip64RecordOffset), at + 8);
    out.writeUInt32LE(1, at + 16);
    at += 20;
  }
  out.writeUInt32LE(0x06054b50, at);
  out.writeUInt16LE(Math.min(records.length, 0xffff), at + 8);
  out.writeUInt16LE(Math.min(records.length, 0xffff), at + 10);
  out.writeUInt32LE(directorySize > MAX_32 ? 0xffffffff : directorySize, at + 12);
  out.writeUInt32LE(offset > MAX_32 ? 0xffffffff : offset, at + 16);
  return out;
}
