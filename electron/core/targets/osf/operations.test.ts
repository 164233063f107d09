// Delete, rename/move and new folder on OSF Storage, against the OSF emulator's WaterButler
// (which follows waterbutler/server/api/v1/provider/movecopy.py and core/provider.py).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FerryError } from '../../errors.js';
import { FileOperations } from '../../operations/service.js';
import { TargetRegistry } from '../../registry.js';
import type { Trash } from '../../target.js';
import type { EmuNode } from '../../../../test/emulators/osf/state.js';
import { fileNodeId, nodeId, storageId } from './ids.js';
import { osfFixture, type OsfFixture } from './test-helpers.js';

const noTrash: Trash = { put: () => Promise.reject(new Error('an OSF delete used the local trash')) };
const fail = (promise: Promise<unknown>) => promise.then(() => null, (e: unknown) => e as FerryError);

let f: OsfFixture;
let operations: FileOperations;
let project: EmuNode;
const fid = (fileId: string) => fileNodeId(project.id, 'osfstorage', fileId);
const pathOf = (fileId: string) => {
  const file = f.emu.state.files.get(fileId);
  return file ? f.emu.state.materializedPath(file) : null;
};

beforeEach(async () => {
  f = await osfFixture();
  const registry = new TargetRegistry();
  registry.register(f.target);
  operations = new FileOperations(registry, noTrash);
  project = f.emu.state.addNode({ title: 'Study', owner: f.userId });
});
afterEach(async () => f.emu.close());

describe('OSF file operations', () => {
  it('offers every operation', () => {
    expect(f.target.info.supported_operations).toEqual({ delete: true, rename: true, move: true, create_folder: true });
  });

  it('renames with WaterButler\'s rename action; a taken name is a 409 (conflict "warn") and nothing is replaced', async () => {
    const a = f.emu.state.addFile(project.id, '/Data/a.txt', 'alpha');
    const b = f.emu.state.addFile(project.id, '/Data/b.txt', 'beta');
    const { outcome, undo } = await operations.move(f.target, f.ctx, fid(a.id), { title: 'renamed.txt' });
    expect(outcome.after).toEqual({ kind: 'item', kind_name: 'file', id: fid(a.id), container: outcome.before.container, title: 'renamed.txt' });
    expect(undo).toEqual({ kind: 'move', id: fid(a.id), title: 'a.txt', container: outcome.before.container });
    expect(pathOf(a.id)).toBe('/Data/renamed.txt');
    const posts = f.emu.state.requests.filter((r) => r.server === 'files' && r.method === 'POST');
    expect(posts).toHaveLength(1);

    const refused = await fail(operations.move(f.target, f.ctx, fid(a.id), { title: 'b.txt' }));
    expect(refused?.status).toBe(409);
    expect(refused?.message).toMatch(/'b\.txt' already exists/);
    expect(pathOf(a.id)).toBe('/Data/renamed.txt');
    expect(pathOf(b.id)).toBe('/Data/b.txt');
  });

  it('replaces only with overwrite (conflict "replace"), and then offers no undo', async () => {
    const a = f.emu.state.addFile(project.id, '/a.txt', 'alpha');
    const b = f.emu.state.addFile(project.id, '/b.txt', 'beta');
    const { outcome, undo } = await operations.move(f.target, f.ctx, fid(a.id), { title: 'b.txt', overwrite: true });
    expect(outcome.replaced).toEqual({ title: 'b.txt', into: { kind: 'deleted' } });
    expect(undo).toBeNull();
    expect(pathOf(b.id)).toBeNull();
    expect(pathOf(a.id)).toBe('/b.txt');
  });

  it('moves a folder with its contents into another folder, and to the storage root (by project or storage id)', async () => {
    const raw = f.emu.state.addFolder(project.id, '/Data/raw/');
    const c = f.emu.state.addFile(project.id, '/Data/raw/c.bin', 'sea');
    const other = f.emu.state.addFolder(project.id, '/Other/');
    const { outcome } = await operations.move(f.target, f.ctx, fid(raw.id), { container: fid(other.id) });
    expect(outcome.after).toMatchObject({ id: fid(raw.id), kind_name: 'folder', container: fid(other.id), title: 'raw' });
    expect(pathOf(c.id)).toBe('/Other/raw/c.bin');
    const top = await operations.move(f.target, f.ctx, fid(raw.id), { container: nodeId(project.id), title: 'RawTop' });
    expect(top.outcome.after.container).toBe(storageId(project.id, 'osfstorage'));
    expect(pathOf(c.id)).toBe('/RawTop/c.bin');
    const into = await fail(operations.move(f.target, f.ctx, fid(other.id), { container: fid(f.emu.state.addFolder(project.id, '/Other/inner/').id) }));
    expect(into?.status).toBe(400);
  });

  it('never replaces a folder with something inside it, even when asked', async () => {
    const raw = f.emu.state.addFolder(project.id, '/Data/raw/');
    const c = f.emu.state.addFile(project.id, '/Data/raw/c.bin', 'sea');
    const refused = await fail(operations.move(f.target, f.ctx, fid(raw.id), { container: nodeId(project.id), title: 'Data', overwrite: true }));
    expect(refused?.status).toBe(409);
    expect(pathOf(c.id)).toBe('/Data/raw/c.bin');
  });

  it('makes a folder (PUT ?kind=folder); a taken name is a 409', async () => {
    const data = f.emu.state.addFolder(project.id, '/Data/');
    const { node, undo } = await operations.createFolder(f.target, f.ctx, fid(data.id), 'New');
    expect(node).toMatchObject({ kind_name: 'folder', container: fid(data.id), title: 'New' });
    expect(undo).toEqual({ kind: 'delete', id: node.id });
    const atRoot = await operations.createFolder(f.target, f.ctx, storageId(project.id, 'osfstorage'), 'Top');
    expect(atRoot.node.container).toBe(storageId(project.id, 'osfstorage'));
    expect((await fail(operations.createFolder(f.target, f.ctx, fid(data.id), 'New')))?.status).toBe(409);
    expect((await fail(operations.createFolder(f.target, f.ctx, null, 'New')))?.status).toBe(400);
  });

  it('deletes a folder with everything below it and no sibling; never a project or a storage', async () => {
    const raw = f.emu.state.addFolder(project.id, '/Data/raw/');
    const c = f.emu.state.addFile(project.id, '/Data/raw/c.bin', 'sea');
    const a = f.emu.state.addFile(project.id, '/Data/a.txt', 'alpha');
    const { outcome, undo } = await operations.delete(f.target, f.ctx, fid(raw.id));
    expect(outcome).toEqual({ node: expect.objectContaining({ title: 'raw', kind_name: 'folder' }), into: { kind: 'deleted' } });
    expect(undo).toBeNull();
    expect(pathOf(c.id)).toBeNull();
    expect(pathOf(a.id)).toBe('/Data/a.txt');
    expect((await fail(operations.delete(f.target, f.ctx, nodeId(project.id))))?.status).toBe(405);
    expect((await fail(operations.delete(f.target, f.ctx, storageId(project.id, 'osfstorage'))))?.status).toBe(405);
    expect(f.emu.state.nodes.get(project.id)?.deleted).toBe(false);
  });
});
