import { deflateRawSync, crc32 } from 'node:zlib';

// Test support: a minimal ZIP writer that writes exactly what it is told, hostile names,
// lying sizes and odd flags included (real zip tools refuse to make most of these).

export interface RawEntry {
  /** written as-is, with the UTF-8 flag set unless `utf8` is false */
  name: string | Buffer;
  utf8?: boolean;
  /** extra fields for the central directory record, as raw bytes */
  centralExtra?: Buffer;
  data?: Buffer;
  /** 0 stored, 8 deflated (default: 8 for non-empty data) */
  method?: number;
  flags?: number;
  /** unix mode, stored in the high 16 bits of the external attributes */
  mode?: number;
  /** override the uncompressed size written in the headers */
  declaredSize?: number;
  /** override the CRC-32 written in the headers */
  crc?: number;
}

export function rawZip(entries: RawEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.isBuffer(entry.name) ? entry.name : Buffer.from(entry.name, 'utf8');
    const data = entry.data ?? Buffer.alloc(0);
    const method = entry.method ?? (data.length > 0 ? 8 : 0);
    const packed = method === 8 ? deflateRawSync(data) : data;
    const crc = entry.crc ?? crc32(data);
    const size = entry.declaredSize ?? data.length;
    const flags = (entry.flags ?? 0) | (entry.utf8 === false ? 0 : 0x800);
    const extra = entry.centralExtra ?? Buffer.alloc(0);
    const mode = entry.mode ?? (name.at(-1) === 0x2f ? 0o040755 : 0o100644);

    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(flags, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt16LE(0, 10);
    local.writeUInt16LE(0x5221, 12); // 2021-01-01
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(packed.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(0, 28);
    locals.push(local, name, packed);

    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(flags, 8);
    central.writeUInt16LE(method, 10);
    central.writeUInt16LE(0, 12);
    central.writeUInt16LE(0x5221, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(packed.length, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt16LE(extra.length, 30);
    central.writeUInt32LE((mode << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, name, extra);
    offset += 30 + name.length + packed.length;
  }
  const directory = Buffer.concat(centrals);
  const count = entries.length;
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(Math.min(count, 0xffff), 8);
  end.writeUInt16LE(Math.min(count, 0xffff), 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, ...(count > 0xffff ? zip64End(count, directory.length, offset) : []), end]);
}

/** Past 65,535 entries the count only fits in a ZIP64 end record (and its locator). */
function zip64End(count: number, directorySize: number, directoryOffset: number): Buffer[] {
  const record = Buffer.alloc(56);
  record.writeUInt32LE(0x06064b50, 0);
  record.writeBigUInt64LE(44n, 4);
  record.writeUInt16LE(45, 12);
  record.writeUInt16LE(45, 14);
  record.writeBigUInt64LE(BigInt(count), 24);
  record.writeBigUInt64LE(BigInt(count), 32);
  record.writeBigUInt64LE(BigInt(directorySize), 40);
  record.writeBigUInt64LE(BigInt(directoryOffset), 48);
  const locator = Buffer.alloc(20);
  locator.writeUInt32LE(0x07064b50, 0);
  locator.writeBigUInt64LE(BigInt(directoryOffset + directorySize), 8);
  locator.writeUInt32LE(1, 16);
  return [record, locator];
}
