import { deflateRawSync, crc32 } from 'node:zlib';

// Test support: a minimal ZIP writer that writes exactly what it is told, hostile names,
// lying sizes and odd flags included (real zip tools refuse to make most of these).
// Every field a hostile archive may lie in can be overridden, in the central directory
// and the local header separately, and the end records too.

export interface RawEntry {
  /** written as-is, with the UTF-8 flag set unless `utf8` is false */
  name: string | Buffer;
  utf8?: boolean;
  /** extra fields for the central directory record, as raw bytes */
  centralExtra?: Buffer;
  /** extra fields for the local header, as raw bytes (default: none) */
  localExtra?: Buffer;
  data?: Buffer;
  /** 0 stored, 8 deflated (default: 8 for non-empty data) */
  method?: number;
  flags?: number;
  /** unix mode, stored in the high 16 bits of the external attributes */
  mode?: number;
  /** override the uncompressed size written in the headers */
  declaredSize?: number;
  /** override the compressed size written in the headers */
  declaredCompressedSize?: number;
  /** override the CRC-32 written in the headers */
  crc?: number;
  /** the local header disagrees with the central record: its own name / flags / method */
  localName?: string | Buffer;
  localFlags?: number;
  localMethod?: number;
  /** override the local header offset the central record points at */
  localOffset?: number;
  /** the packed bytes exactly as stored (skips deflating `data`; `data` still gives CRC and size) */
  packed?: Buffer;
  /** false: write no central record for this entry (only its local header and data) */
  central?: boolean;
  /** false: write no local header and data (a central record pointing at `localOffset`) */
  local?: boolean;
  /** the "version made by" host byte (3 unix, 0 MS-DOS) */
  host?: number;
  fileComment?: Buffer;
}

export interface RawZipOptions {
  /** bytes before the first local header (a self-extractor stub), offsets not adjusted */
  prefix?: Buffer;
  /** the archive comment */
  comment?: Buffer;
  /** what the end record claims, each overriding the true value */
  eocd?: { diskEntries?: number; entries?: number; directorySize?: number; directoryOffset?: number; commentLength?: number; disk?: number };
  /** write a ZIP64 end record and locator even under 65,535 entries, with these lies */
  zip64?: { entries?: number; directorySize?: number; directoryOffset?: number; locatorOffset?: number; recordSize?: bigint };
  /** bytes appended after everything */
  suffix?: Buffer;
}

/** Where each part of an archive made by rawZipLayout sits, for mutations that need offsets. */
export interface RawZipLayout {
  bytes: Buffer;
  locals: { offset: number; dataOffset: number; dataLength: number }[];
  centrals: { offset: number; length: number }[];
  directoryOffset: number;
  directorySize: number;
  endOffset: number;
}

export function rawZip(entries: RawEntry[], options: RawZipOptions = {}): Buffer {
  return rawZipLayout(entries, options).bytes;
}

export function rawZipLayout(entries: RawEntry[], options: RawZipOptions = {}): RawZipLayout {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  const layout: Omit<RawZipLayout, 'bytes' | 'directoryOffset' | 'directorySize' | 'endOffset'> = { locals: [], centrals: [] };
  const prefix = options.prefix ?? Buffer.alloc(0);
  let offset = 0;
  let centralLength = 0;
  let records = 0;
  for (const entry of entries) {
    const name = Buffer.isBuffer(entry.name) ? entry.name : Buffer.from(entry.name, 'utf8');
    const localName = entry.localName === undefined ? name : Buffer.isBuffer(entry.localName) ? entry.localName : Buffer.from(entry.localName, 'utf8');
    const data = entry.data ?? Buffer.alloc(0);
    const method = entry.method ?? (data.length > 0 ? 8 : 0);
    const packed = entry.packed ?? (method === 8 ? deflateRawSync(data) : data);
    const crc = entry.crc ?? crc32(data);
    const size = entry.declaredSize ?? data.length;
    const packedSize = entry.declaredCompressedSize ?? packed.length;
    const flags = (entry.flags ?? 0) | (entry.utf8 === false ? 0 : 0x800);
    const extra = entry.centralExtra ?? Buffer.alloc(0);
    const localExtra = entry.localExtra ?? Buffer.alloc(0);
    const mode = entry.mode ?? (name.at(-1) === 0x2f ? 0o040755 : 0o100644);
    const comment = entry.fileComment ?? Buffer.alloc(0);

    const localAt = offset;
    if (entry.local !== false) {
      const local = Buffer.alloc(30);
      local.writeUInt32LE(0x04034b50, 0);
      local.writeUInt16LE(20, 4);
      local.writeUInt16LE(entry.localFlags ?? flags, 6);
      local.writeUInt16LE(entry.localMethod ?? method, 8);
      local.writeUInt16LE(0, 10);
      local.writeUInt16LE(0x5221, 12); // 2021-01-01
      local.writeUInt32LE(crc >>> 0, 14);
      local.writeUInt32LE(packedSize >>> 0, 18);
      local.writeUInt32LE(size >>> 0, 22);
      local.writeUInt16LE(localName.length, 26);
      local.writeUInt16LE(localExtra.length, 28);
      locals.push(local, localName, localExtra, packed);
      layout.locals.push({ offset: prefix.length + localAt, dataOffset: prefix.length + localAt + 30 + localName.length + localExtra.length, dataLength: packed.length });
      offset += 30 + localName.length + localExtra.length + packed.length;
    }

    if (entry.central !== false) {
      const central = Buffer.alloc(46);
      central.writeUInt32LE(0x02014b50, 0);
      central.writeUInt16LE(((entry.host ?? 3) << 8) | 20, 4);
      central.writeUInt16LE(20, 6);
      central.writeUInt16LE(flags, 8);
      central.writeUInt16LE(method, 10);
      central.writeUInt16LE(0, 12);
      central.writeUInt16LE(0x5221, 14);
      central.writeUInt32LE(crc >>> 0, 16);
      central.writeUInt32LE(packedSize >>> 0, 20);
      central.writeUInt32LE(size >>> 0, 24);
      central.writeUInt16LE(name.length, 28);
      central.writeUInt16LE(extra.length, 30);
      central.writeUInt16LE(comment.length, 32);
      central.writeUInt32LE((mode << 16) >>> 0, 38);
      central.writeUInt32LE((entry.localOffset ?? localAt) >>> 0, 42);
      centrals.push(central, name, extra, comment);
      layout.centrals.push({ offset: centralLength, length: 46 + name.length + extra.length + comment.length });
      centralLength += 46 + name.length + extra.length + comment.length;
      records++;
    }
  }
  const directory = Buffer.concat(centrals);
  const count = records;
  const eocd = options.eocd ?? {};
  const comment = options.comment ?? Buffer.alloc(0);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(eocd.disk ?? 0, 4);
  end.writeUInt16LE(eocd.diskEntries ?? eocd.entries ?? Math.min(count, 0xffff), 8);
  end.writeUInt16LE(eocd.entries ?? Math.min(count, 0xffff), 10);
  end.writeUInt32LE((eocd.directorySize ?? directory.length) >>> 0, 12);
  end.writeUInt32LE((eocd.directoryOffset ?? offset) >>> 0, 16);
  end.writeUInt16LE(eocd.commentLength ?? comment.length, 20);
  const wide = options.zip64 || count > 0xffff ? zip64End(count, directory.length, offset, options.zip64) : [];
  const parts = [prefix, ...locals, directory, ...wide, end, comment, options.suffix ?? Buffer.alloc(0)];
  const bytes = Buffer.concat(parts);
  const directoryOffset = prefix.length + offset;
  const endOffset = directoryOffset + directory.length + wide.reduce((sum, part) => sum + part.length, 0);
  return {
    bytes,
    locals: layout.locals,
    centrals: layout.centrals.map((record) => ({ offset: directoryOffset + record.offset, length: record.length })),
    directoryOffset,
    directorySize: directory.length,
    endOffset,
  };
}

/** Past 65,535 entries the count only fits in a ZIP64 end record (and its locator). */
function zip64End(count: number, directorySize: number, directoryOffset: number, lies: RawZipOptions['zip64'] = {}): Buffer[] {
  const record = Buffer.alloc(56);
  record.writeUInt32LE(0x06064b50, 0);
  record.writeBigUInt64LE(lies.recordSize ?? 44n, 4);
  record.writeUInt16LE(45, 12);
  record.writeUInt16LE(45, 14);
  record.writeBigUInt64LE(BigInt(lies.entries ?? count), 24);
  record.writeBigUInt64LE(BigInt(lies.entries ?? count), 32);
  record.writeBigUInt64LE(BigInt(lies.directorySize ?? directorySize), 40);
  record.writeBigUInt64LE(BigInt(lies.directoryOffset ?? directoryOffset), 48);
  const locator = Buffer.alloc(20);
  locator.writeUInt32LE(0x07064b50, 0);
  locator.writeBigUInt64LE(BigInt(lies.locatorOffset ?? directoryOffset + directorySize), 8);
  locator.writeUInt32LE(1, 16);
  return [record, locator];
}

/** A ZIP64 extended-information extra field (id 0x0001) holding these 8-byte values in order. */
export function zip64Extra(...values: (number | bigint)[]): Buffer {
  const field = Buffer.alloc(4 + 8 * values.length);
  field.writeUInt16LE(0x0001, 0);
  field.writeUInt16LE(8 * values.length, 2);
  values.forEach((value, i) => field.writeBigUInt64LE(BigInt(value), 4 + 8 * i));
  return field;
}

/**
 * Stored entries each covering every later local header and a final kernel: n entries,
 * about n × kernel bytes uncompressed from one kernel ("better zip bomb" by overlap, with
 * distinct header offsets so the shared-header check alone does not catch it).
 */
export function overlapBombZip(n: number, kernelBytes: number): Buffer {
  const kernel = Buffer.alloc(kernelBytes, 0x41);
  const names = Array.from({ length: n }, (_, i) => Buffer.from(`D/${i.toString(36)}`));
  // local headers back to front: each one's data is everything after its own header
  let tail = kernel;
  const headers: Buffer[] = [];
  const crcs: number[] = [];
  const sizes: number[] = [];
  for (let i = n - 1; i >= 0; i--) {
    const header = Buffer.alloc(30);
    header.writeUInt32LE(0x04034b50, 0);
    header.writeUInt16LE(20, 4);
    header.writeUInt32LE(crc32(tail), 14);
    header.writeUInt32LE(tail.length, 18);
    header.writeUInt32LE(tail.length, 22);
    header.writeUInt16LE(names[i]!.length, 26);
    crcs[i] = crc32(tail);
    sizes[i] = tail.length;
    headers[i] = Buffer.concat([header, names[i]!]);
    tail = Buffer.concat([headers[i]!, tail]);
  }
  const body = tail;
  const centrals: Buffer[] = [];
  let offset = 0;
  for (let i = 0; i < n; i++) {
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt32LE(crcs[i]!, 16);
    central.writeUInt32LE(sizes[i]!, 20);
    central.writeUInt32LE(sizes[i]!, 24);
    central.writeUInt16LE(names[i]!.length, 28);
    central.writeUInt32LE((0o100644 << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, names[i]!);
    offset += headers[i]!.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(n, 8);
  end.writeUInt16LE(n, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(body.length, 16);
  return Buffer.concat([body, directory, end]);
}
