import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import type { FerryBridge } from '../../../shared/ipc.js';
import type { LocalRootsAnswer } from '../api/app-types.js';
import { ApiRequestError } from '../api/client.js';
import { ServicesContext, type Services } from '../services.js';
import { createLocalRootsStore } from '../stores/local-roots.js';
import { createUiStore } from '../stores/ui.js';
import { LocalFoldersDialog } from './LocalFoldersDialog.js';

afterEach(cleanup);

function setup(bridge?: Partial<FerryBridge>) {
  let answer: LocalRootsAnswer = { workspace: '/home/a/Ferry', roots: [] };
  const api = {
    localRoots: vi.fn(async () => answer),
    putLocalRoot: vi.fn(async (path: string, label?: string) => {
      if (!path.startsWith('/')) throw new ApiRequestError('Enter the whole path of the folder, starting at the top.', 400, 'bad_request');
      const root = { name: 'local-data', label: label ?? 'Data', path };
      answer = { ...answer, roots: [root] };
      return root;
    }),
    removeLocalRoot: vi.fn(),
  };
  const ui = createUiStore();
  ui.setState({ localFoldersOpen: true });
  const services = {
    api,
    bridge,
    ui,
    session: { load: vi.fn(async () => undefined) },
    localRoots: createLocalRootsStore(api),
    panes: {},
  } as unknown as Services;
  render(
    <ServicesContext.Provider value={services}>
      <LocalFoldersDialog />
    </ServicesContext.Provider>,
  );
  return { api };
}

describe('local folders dialog', () => {
  it('shows the refusal sentence, then adds with the real path shown', async () => {
    const { api } = setup();
    await screen.findByText('/home/a/Ferry');
    expect(screen.queryByRole('button', { name: 'Choose…' })).toBeNull(); // browser mode: a path field only
    fireEvent.change(screen.getByLabelText('Folder path'), { target: { value: 'Data' } });
    fireEvent.click(screen.getByRole('button', { name: 'Add folder' }));
    await waitFor(() => expect(screen.getByRole('alert').textContent).toMatch(/whole path/));
    fireEvent.change(screen.getByLabelText('Folder path'), { target: { value: '/home/a/Data' } });
    fireEvent.click(screen.getByRole('button', { name: 'Add folder' }));
    await screen.findByText('/home/a/Data');
    expect(api.putLocalRoot).toHaveBeenLastCalledWith('/home/a/Data', undefined);
  });

  it('in Electron, Choose… asks the native folder picker over the bridge and fills the path', async () => {
    const openDialog = vi.fn(async () => ['/media/usb/Run 7']);
    setup({ openDialog });
    fireEvent.click(await screen.findByRole('button', { name: 'Choose…' }));
    await waitFor(() => expect((screen.getByLabelText('Folder path') as HTMLInputElement).value).toBe('/media/usb/Run 7'));
    expect(openDialog).toHaveBeenCalledWith({ mode: 'folder' });
  });

  it('a cancelled picker leaves the field as it was', async () => {
    setup({ openDialog: vi.fn(async () => []) });
    fireEvent.change(screen.getByLabelText('Folder path'), { target: { value: '/typed' } });
    fireEvent.click(await screen.findByRole('button', { name: 'Choose…' }));
    await new Promise((r) => setTimeout(r, 10));
    expect((screen.getByLabelText('Folder path') as HTMLInputElement).value).toBe('/typed');
  });
});
