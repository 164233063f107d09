import { describe, expect, it, vi } from 'vitest';
import type { TargetDescription, UndoRequest } from '../../shared/api.js';
import type { ApiClient } from './api/client.js';
import { nameProblem } from './file-operations.js';
import { createServices } from './services.js';
import { MemoryStorage, summary } from './test-support.js';

const ALL_OPERATIONS = { delete: true, rename: true, move: true, create_folder: true };

function target(name: string, readable: string): TargetDescription {
  return {
    name,
    readable_name: readable,
    supported_actions: { resource_collection: true, resource_detail: true, resource_download: true, resource_upload: true },
    supported_hash_algorithms: ['md5'],
    detail: '',
    supported_operations: ALL_OPERATIONS,
    capabilities: { search: false, folder_modes: [] },
    keeps_metadata: false,
  };
}

const undoRequest: UndoRequest = { method: 'POST', url: 'http://127.0.0.1:1/api_v1/trash/t1/restore/', description: 'Puts it back from Ferry’s trash.' };

function setup() {
  const deleteResource = vi.fn(async (_t: string, id: string) => ({
    deleted: summary(id, id),
    deleted_into: 'ferry_trash' as const,
    trash_id: 't1',
    message: `'${id}' was moved to Ferry's trash.`,
    undo: undoRequest,
  }));
  const undo = vi.fn(async () => undefined);
  const api = {
    baseUrl: 'http://127.0.0.1:1',
    authHeaders: {},
    session: async () => ({
      version: '0',
      keychain: { persistent: false, description: '' },
      targets: [
        { name: 'local', readable_name: 'Local folders', credential: 'access-key', has_stored_token: true },
        { name: 'webdav', readable_name: 'WebDAV', credential: 'remote', has_stored_token: true },
      ],
    }),
    targets: async () => [target('local', 'Local folders'), target('webdav', 'WebDAV')],
    children: async () => [summary('a.txt', 'a.txt'), summary('raw', 'raw', 'container')],
    deleteResource,
    undo,
  } as unknown as ApiClient;
  const services = createServices({ api, storage: new MemoryStorage() });
  return { services, deleteResource, undo };
}

describe('delete', () => {
  it('on this machine: to the trash at once, and Undo sends the undo request as the server wrote it', async () => {
    const { services, deleteResource, undo } = setup();
    await services.session.load();
    await services.panes.left.getState().setTarget('local');
    services.panes.left.getState().select('a.txt', 'replace', []);
    await services.actions.deleteSelection('left');
    expect(services.ui.getState().confirmation).toBeNull();
    expect(deleteResource).toHaveBeenCalledWith('local', 'a.txt');
    const notice = services.ui.getState().notices.left!;
    expect(notice.text).toContain("moved to Ferry's trash");
    notice.undo!();
    await vi.waitFor(() => expect(undo).toHaveBeenCalledWith(undoRequest));
  });

  it('on a remote service: asks first, naming what and where; Cancel deletes nothing', async () => {
    const { services, deleteResource } = setup();
    await services.session.load();
    await services.panes.left.getState().setTarget('webdav');
    services.panes.left.getState().selectAll(['a.txt', 'raw']);
    const pending = services.actions.deleteSelection('left');
    await vi.waitFor(() => expect(services.ui.getState().confirmation).not.toBeNull());
    const question = services.ui.getState().confirmation!;
    expect(question.text).toContain('2 items will be deleted from WebDAV');
    expect(question.text).toContain('cannot be undone');
    question.answer(false);
    await pending;
    expect(deleteResource).not.toHaveBeenCalled();
  });

  it('stops at the first failure and says which, keeping what was done undoable', async () => {
    const { services, deleteResource } = setup();
    deleteResource.mockImplementationOnce(async (_t, id) => ({ deleted: summary(id, id), deleted_into: 'ferry_trash', trash_id: 't1', message: 'first gone.', undo: undoRequest }));
    deleteResource.mockImplementationOnce(async () => {
      throw new Error('refused');
    });
    await services.session.load();
    await services.panes.left.getState().setTarget('local');
    services.panes.left.getState().selectAll(['a.txt', 'raw']);
    await services.actions.deleteSelection('left');
    const notice = services.ui.getState().notices.left!;
    expect(notice.kind).toBe('error');
    expect(notice.text).toBe('first gone. “raw” could not be deleted: refused');
    expect(notice.undo).toBeTypeOf('function');
  });
});

describe('nameProblem', () => {
  it('follows the one rule for names of docs/api.md', () => {
    expect(nameProblem('ok name.txt')).toBeNull();
    expect(nameProblem('a/b')).not.toBeNull();
    expect(nameProblem('..')).not.toBeNull();
    expect(nameProblem('x'.repeat(256))).not.toBeNull();
    expect(nameProblem('tab\there')).not.toBeNull();
  });
});
