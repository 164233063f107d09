// Turning what the user dropped or picked into a list of relative paths + File objects.
// Nothing is read here: File objects are handles, the ZIP writer streams them later.
import type { DescribedFile } from '../api/client.js';

export interface PickedFile {
  /** slash-separated path relative to the drop, e.g. "data/run1/a.csv" */
  path: string;
  file: File;
}

export interface Picked {
  files: PickedFile[];
  /** folders with nothing inside (they would vanish otherwise) */
  emptyFolders: string[];
}

/** From an <input type=file> (with or without webkitdirectory). */
export function fromFileList(list: FileList | readonly File[]): Picked {
  const files = Array.from(list).map((file) => ({
    path: (file as File & { webkitRelativePath?: string }).webkitRelativePath || file.name,
    file,
  }));
  return { files, emptyFolders: [] };
}

interface EntryLike {
  isFile: boolean;
  isDirectory: boolean;
  name: string;
  fullPath?: string;
}

type FileEntryLike = EntryLike & { file(ok: (file: File) => void, fail: (error: unknown) => void): void };
type DirEntryLike = EntryLike & {
  createReader(): { readEntries(ok: (entries: EntryLike[]) => void, fail: (error: unknown) => void): void };
};

async function walk(entry: EntryLike, prefix: string, out: Picked): Promise<void> {
  const path = prefix ? `${prefix}/${entry.name}` : entry.name;
  if (entry.isFile) {
    const file = await new Promise<File>((ok, fail) => (entry as FileEntryLike).file(ok, fail));
    out.files.push({ path, file });
    return;
  }
  if (!entry.isDirectory) return;
  const reader = (entry as DirEntryLike).createReader();
  let any = false;
  // readEntries hands out batches (100 in Chromium) until it returns an empty one
  for (;;) {
    const batch = await new Promise<EntryLike[]>((ok, fail) => reader.readEntries(ok, fail));
    if (batch.length === 0) break;
    any = true;
    for (const child of batch) await walk(child, path, out);
  }
  if (!any) out.emptyFolders.push(path);
}

/**
 * From a drop. The entries must be taken synchronously inside the drop handler (the
 * DataTransfer is emptied afterwards); call this there and await the result later.
 */
export function fromDataTransfer(transfer: DataTransfer): Promise<Picked> {
  const roots: EntryLike[] = [];
  const plainFiles: File[] = [];
  for (const item of Array.from(transfer.items ?? [])) {
    if (item.kind !== 'file') continue;
    const entry = (item as DataTransferItem & { webkitGetAsEntry?: () => EntryLike | null }).webkitGetAsEntry?.();
    if (entry) roots.push(entry);
    else {
      const file = item.getAsFile();
      if (file) plainFiles.push(file);
    }
  }
  if (roots.length === 0 && plainFiles.length === 0) plainFiles.push(...Array.from(transfer.files ?? []));
  return (async () => {
    const out: Picked = { files: plainFiles.map((file) => ({ path: file.name, file })), emptyFolders: [] };
    for (const root of roots) await walk(root, '', out);
    return out;
  })();
}

export interface UploadPlan {
  /** top folder name for a top-level upload, null when uploading into a container */
  folder: string | null;
  files: PickedFile[];
  emptyFolders: string[];
}

/**
 * Splits a pick into upload jobs. Into a container: one job. At a target's top level each
 * job must hold exactly one top folder, so each dropped folder becomes its own job and
 * loose files go together into a folder named `looseFolderName`.
 */
export function planUploads(picked: Picked, atTopLevel: boolean, looseFolderName: string): UploadPlan[] {
  if (!atTopLevel) return [{ folder: null, files: picked.files, emptyFolders: picked.emptyFolders }];
  const byFolder = new Map<string, UploadPlan>();
  const loose: PickedFile[] = [];
  const plan = (name: string) => {
    let entry = byFolder.get(name);
    if (!entry) byFolder.set(name, (entry = { folder: name, files: [], emptyFolders: [] }));
    return entry;
  };
  for (const picked_ of picked.files) {
    const slash = picked_.path.indexOf('/');
    if (slash === -1) loose.push(picked_);
    else plan(picked_.path.slice(0, slash)).files.push(picked_);
  }
  for (const folder of picked.emptyFolders) {
    const slash = folder.indexOf('/');
    if (slash === -1) plan(folder);
    else plan(folder.slice(0, slash)).emptyFolders.push(folder);
  }
  const plans = [...byFolder.values()];
  if (loose.length > 0) {
    plans.push({
      folder: looseFolderName,
      files: loose.map((f) => ({ path: `${looseFolderName}/${f.path}`, file: f.file })),
      emptyFolders: [],
    });
  }
  return plans;
}

/** Names shown to the user and checked against the destination listing. */
export function topLevelNames(picked: Picked): string[] {
  const names = new Set<string>();
  for (const f of picked.files) names.add(f.path.split('/')[0]!);
  for (const d of picked.emptyFolders) names.add(d.split('/')[0]!);
  return [...names];
}

/**
 * Whether the upload holds folders below what becomes the destination's folder: into a
 * folder, any path with a folder in it; at the top level (each top folder becomes a resource),
 * a folder inside a top folder. Only then does a destination that keeps no folders need to
 * know how to keep them.
 */
export function hasSubfolders(picked: Picked, atTopLevel: boolean): boolean {
  const depth = atTopLevel ? 2 : 1;
  return (
    picked.files.some((file) => file.path.split('/').length > depth) ||
    picked.emptyFolders.some((folder) => folder.split('/').length >= depth)
  );
}

/** Files hashed for the duplicates preview: each at most this large, all together at most HASHED_TOTAL_BYTES (read whole in memory). */
export const HASHED_FILE_BYTES = 16 * 1024 * 1024;
const HASHED_TOTAL_BYTES = 128 * 1024 * 1024;

/**
 * The files as the ZIP will hold them, for the duplicates preview: path, size, modification
 * time and, where it is cheap (small files, a browser that hashes), SHA-256, to be shown
 * beside the stored file's. Only asked for when a person opens "Choose per file…".
 */
export async function describeFiles(files: readonly PickedFile[]): Promise<DescribedFile[]> {
  const subtle = globalThis.crypto?.subtle;
  let budget = HASHED_TOTAL_BYTES;
  const described: DescribedFile[] = [];
  for (const { path, file } of files) {
    const facts: DescribedFile = { path, size: file.size, date_modified: new Date(file.lastModified || Date.now()).toISOString() };
    if (subtle && file.size <= HASHED_FILE_BYTES && file.size <= budget) {
      budget -= file.size;
      facts.hashes = { sha256: hex(await subtle.digest('SHA-256', await file.arrayBuffer())) };
    }
    described.push(facts);
  }
  return described;
}

function hex(digest: ArrayBuffer): string {
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, '0')).join('');
}
