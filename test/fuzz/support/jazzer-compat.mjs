// Loads Jazzer.js's prebuilt libFuzzer addon on Debian 12 (glibc 2.36, libstdc++ of GCC 12).
//
// @jazzer.js/fuzzer 4.0.0 ships fuzzer-linux-x64.node built on a newer system: it asks for
// three symbols this machine's libraries don't have, nothing else:
//   __isoc23_strtol, __isoc23_strtoul (GLIBC_2.38): glibc's C23 strtol/strtoul, which differ
//     from the classic ones only in also reading "0b" binary literals (libFuzzer parses its
//     decimal -flags with them), so they are bound to strtol/strtoul@GLIBC_2.2.5 instead;
//   std::ios_base_library_init() (GLIBCXX_3.4.32): a link-time marker of GCC 13's libstdc++
//     with no relocation against it (never called); made a weak reference. Node itself
//     constructs std::ios_base::Init, so iostreams are set up as before.
// The two version requirements are marked weak (VER_FLG_WEAK), which ld.so accepts when the
// version is missing. Only a copy is patched (in the temp dir, keyed by the original's
// hash), and only when loading the original fails for exactly this reason, so on a newer
// system the untouched addon is used. Preload with `node --import <this file's URL>`.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ADDON = /[\\/]@jazzer\.js[\\/]fuzzer[\\/]prebuilds[\\/]fuzzer-linux-x64\.node$/;
const SHT_DYNSYM = 11;
const SHT_GNU_VERSYM = 0x6fffffff;
const SHT_GNU_VERNEED = 0x6ffffffe;
const VER_FLG_WEAK = 0x2;
const VER_NDX_GLOBAL = 1;
const STB_WEAK = 1;

/** symbol → what it becomes: another libc symbol (a suffix of its name) or a weak reference */
const REBIND = {
  __isoc23_strtol: { name: 'strtol', file: 'libc.so.6', version: 'GLIBC_2.2.5' },
  __isoc23_strtoul: { name: 'strtoul', file: 'libc.so.6', version: 'GLIBC_2.2.5' },
  _ZSt21ios_base_library_initv: { weak: true },
};
const WEAKEN_VERSIONS = new Set(['GLIBC_2.38', 'GLIBCXX_3.4.32']);

function cString(buffer, at) {
  const end = buffer.indexOf(0, at);
  return buffer.toString('latin1', at, end);
}

/** The patched copy of an ELF64 little-endian shared object (see the comment above). */
export function patchAddon(original) {
  const elf = Buffer.from(original);
  if (elf.readUInt32BE(0) !== 0x7f454c46 || elf[4] !== 2 || elf[5] !== 1) throw new Error('not a 64-bit little-endian ELF file');
  const shoff = Number(elf.readBigUInt64LE(0x28));
  const shentsize = elf.readUInt16LE(0x3a);
  const shnum = elf.readUInt16LE(0x3c);
  const sections = [];
  for (let i = 0; i < shnum; i++) {
    const at = shoff + i * shentsize;
    sections.push({
      type: elf.readUInt32LE(at + 4),
      offset: Number(elf.readBigUInt64LE(at + 24)),
      size: Number(elf.readBigUInt64LE(at + 32)),
      link: elf.readUInt32LE(at + 40),
      info: elf.readUInt32LE(at + 44),
    });
  }
  const dynsym = sections.find((s) => s.type === SHT_DYNSYM);
  const versym = sections.find((s) => s.type === SHT_GNU_VERSYM);
  const verneed = sections.find((s) => s.type === SHT_GNU_VERNEED);
  if (!dynsym || !versym || !verneed) throw new Error('no dynamic symbol or version sections');
  const dynstr = sections[dynsym.link];

  // version requirements: index → { file, name }, and weaken the ones this system lacks
  const versionIndex = new Map();
  const weakened = new Set();
  let need = verneed.offset;
  for (let n = 0; n < verneed.info; n++) {
    const file = cString(elf, dynstr.offset + elf.readUInt32LE(need + 4));
    let aux = need + elf.readUInt32LE(need + 8);
    for (let a = 0; a < elf.readUInt16LE(need + 2); a++) {
      const name = cString(elf, dynstr.offset + elf.readUInt32LE(aux + 8));
      const index = elf.readUInt16LE(aux + 6);
      versionIndex.set(`${file} ${name}`, index);
      if (WEAKEN_VERSIONS.has(name)) {
        elf.writeUInt16LE(elf.readUInt16LE(aux + 4) | VER_FLG_WEAK, aux + 4);
        weakened.add(index);
      }
      aux += elf.readUInt32LE(aux + 12);
    }
    need += elf.readUInt32LE(need + 12);
  }

  const count = dynsym.size / 24;
  const rebound = new Set();
  for (let i = 0; i < count; i++) {
    const at = dynsym.offset + i * 24;
    const nameOffset = elf.readUInt32LE(at);
    const name = cString(elf, dynstr.offset + nameOffset);
    const versymAt = versym.offset + i * 2;
    const plan = REBIND[name];
    if (plan?.weak) {
      elf[at + 4] = (STB_WEAK << 4) | (elf[at + 4] & 0xf);
      elf.writeUInt16LE(VER_NDX_GLOBAL, versymAt);
      rebound.add(name);
    } else if (plan) {
      if (!name.endsWith(plan.name)) throw new Error(`${plan.name} is not a suffix of ${name}`);
      const index = versionIndex.get(`${plan.file} ${plan.version}`);
      if (index === undefined) throw new Error(`the addon requires no ${plan.version} from ${plan.file}`);
      elf.writeUInt32LE(nameOffset + name.length - plan.name.length, at);
      elf.writeUInt16LE(index, versymAt);
      rebound.add(name);
    } else if (weakened.has(elf.readUInt16LE(versymAt) & 0x7fff)) {
      throw new Error(`${name} needs a version this system lacks, and no replacement is known for it`);
    }
  }
  return elf;
}

function patchedCopy(file) {
  const original = fs.readFileSync(file);
  const digest = createHash('sha256').update(original).digest('hex').slice(0, 16);
  const dir = path.join(os.tmpdir(), `ferry-jazzer-addon-${digest}`);
  const target = path.join(dir, path.basename(file));
  if (fs.existsSync(target)) return target;
  fs.mkdirSync(dir, { recursive: true });
  const temporary = `${target}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, patchAddon(original));
  fs.renameSync(temporary, target);
  return target;
}

const dlopen = process.dlopen;
process.dlopen = function dlopenWithCompat(module, filename, ...rest) {
  try {
    return dlopen.call(this, module, filename, ...rest);
  } catch (error) {
    const missingVersion = /version `(GLIBC_2\.38|GLIBCXX_3\.4\.32)' not found/.test(String(error && error.message));
    if (!ADDON.test(String(filename)) || !missingVersion) throw error;
    return dlopen.call(this, module, patchedCopy(filename), ...rest);
  }
};

