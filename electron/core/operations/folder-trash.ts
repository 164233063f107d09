// Ferry's own trash: a folder in the data directory. What a local delete (or an overwrite)
// removes is moved to `<trash>/<id>-<name>`, with `<trash>/<id>.json` recording where it
// came from, so it can be put back (POST /api_v1/trash/<id>/restore/). The record is written
// before the move: a crash between the two leaves a record whose item is missing, which
// list() skips, never an item nobody can trace. Nothing here deletes anything.
import { randomBytes } from 'node:crypto';
import { cp, mkdir, readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { notFound } from '../errors.js';
import { writeFileAtomic } from '../jobs/atomic-file.js';
import type { RestorableTrash, TrashedItem, TrashOrigin, TrashReceipt } from '../target.js';
import { renameNoReplace } from './no-replace.js';

/** `20261124T074512123Z-a1b2c3`: sortable by time, URL-safe, and no item name can look like it plus `.json`. */
const ID = /^\d{8}T\d{9}Z-[0-9a-f]{6}$/;

interface TrashRecord {
  version: 1;
  id: string;
  origin: TrashOrigin;
  trashed_at: string;
  /** the item's name inside the trash folder */
  stored_as: string;
}

export class FolderTrash implements RestorableTrash {
  constructor(
    private readonly dir: string,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async put(absolutePath: string, origin: TrashOrigin): Promise<TrashReceipt> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const at = this.now();
    const id = `${at.toISOString().replace(/[-:.]/g, '')}-${randomBytes(3).toString('hex')}`;
    const record: TrashRecord = { version: 1, id, origin, trashed_at: at.toISOString(), stored_as: storedName(id, path.basename(absolutePath)) };
    const recordFile = this.recordPath(id);
    await writeFileAtomic(recordFile, JSON.stringify(record, null, 2));
    try {
      await moveAcrossDisks(absolutePath, path.join(this.dir, record.stored_as));
    } catch (error) {
      await rm(recordFile, { force: true });
      throw error;
    }
    return { kind: 'ferry_trash', id };
  }

  /** Everything in the trash, newest first. */
  async list(): Promise<TrashedItem[]> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch {
      return [];
    }
    const present = new Set(names);
    const items: TrashedItem[] = [];
    for (const name of names) {
      if (!name.endsWith('.json') || !ID.test(name.slice(0, -5))) continue;
      const record = await this.readRecord(name.slice(0, -5));
      if (record && present.has(record.stored_as)) items.push(itemOf(record));
    }
    return items.sort((a, b) => b.trashedAt.getTime() - a.trashedAt.getTime() || (a.id < b.id ? 1 : -1));
  }

  async find(id: string): Promise<TrashedItem> {
    const record = ID.test(id) ? await this.readRecord(id) : null;
    if (!record) throw notFound(`Ferry's trash holds nothing with the id '${id.slice(0, 40)}'; GET /api_v1/trash/ lists what it holds.`);
    return itemOf(record);
  }

  async takeOut(id: string, absolutePath: string): Promise<void> {
    const record = ID.test(id) ? await this.readRecord(id) : null;
    if (!record) throw notFound(`Ferry's trash holds nothing with the id '${id.slice(0, 40)}'.`);
    await moveAcrossDisks(path.join(this.dir, record.stored_as), absolutePath);
    await rm(this.recordPath(id), { force: true });
  }

  private recordPath(id: string): string {
    return path.join(this.dir, `${id}.json`);
  }

  private async readRecord(id: string): Promise<TrashRecord | null> {
    try {
      const record = JSON.parse(await readFile(this.recordPath(id), 'utf8')) as TrashRecord;
      return record.version === 1 && record.id === id && typeof record.stored_as === 'string' && !record.stored_as.includes('/') ? record : null;
    } catch {
      return null;
    }
  }
}

function itemOf(record: TrashRecord): TrashedItem {
  return { id: record.id, origin: record.origin, trashedAt: new Date(record.trashed_at) };
}

/** `<id>-<name>`, the name cut (at a character) to keep the whole within 255 bytes. */
function storedName(id: string, name: string): string {
  let kept = name;
  while (Buffer.byteLength(`${id}-${kept}`, 'utf8') > 255) kept = [...kept].slice(0, -1).join('');
  return `${id}-${kept}`;
}

/**
 * A no-replace rename; where the data directory sits on another disk than the file (EXDEV),
 * a copy that refuses to overwrite, then the removal of the original once the copy is whole.
 */
async function moveAcrossDisks(from: string, to: string): Promise<void> {
  try {
    await renameNoReplace(from, to);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
    await cp(from, to, { recursive: true, errorOnExist: true, force: false, preserveTimestamps: true, verbatimSymlinks: true });
    await rm(from, { recursive: true });
  }
}
