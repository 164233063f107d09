import { afterEach, describe, expect, it, vi } from 'vitest';
import { act, cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { MemoryStorage } from '../test-support.js';
import { compacted, createDuplicatePrompt, type DuplicateDecision } from '../stores/duplicates.js';
import type { FileConflict } from '../../../shared/api.js';
import { DuplicateDialog } from './DuplicateDialog.js';
import { AccountForm } from './AccountForm.js';
import { ServicesContext, type Services } from '../services.js';
import { askFolderMode, askMetadataReview, createUiStore } from '../stores/ui.js';
import { FolderModeDialog } from './FolderModeDialog.js';
import { MetadataReviewDialog } from './MetadataReviewDialog.js';

afterEach(cleanup);

describe('duplicate prompt', () => {
  it('asks once, offers the four actions for all, and remembers the choice only when asked to', async () => {
    const storage = new MemoryStorage();
    const prompt = createDuplicatePrompt(storage);
    render(<DuplicateDialog prompt={prompt} />);
    let answer: Promise<DuplicateDecision | null>;
    act(() => {
      answer = prompt.ask('a.csv into OSF › Project');
    });
    const dialog = screen.getByRole('dialog', { name: /already be there/ });
    expect(dialog.textContent).toContain('a.csv into OSF › Project');
    const forAll = within(screen.getByRole('group', { name: 'For all files' }));
    expect(forAll.getAllByRole('button').map((button) => button.textContent)).toEqual(['Skip', 'Replace if different', 'Replace if newer', 'Keep both']);
    // nothing to list file by file (a write to a new top-level resource): not offered
    expect(screen.queryByRole('button', { name: 'Choose per file…' })).toBeNull();
    fireEvent.click(forAll.getByRole('button', { name: 'Replace if newer' }));
    expect(await answer!).toEqual({ action: 'newer' });
    expect(storage.getItem('ferry.duplicateAction')).toBeNull();
    expect(screen.queryByRole('dialog')).toBeNull();

    act(() => {
      answer = prompt.ask('b.csv');
    });
    fireEvent.click(screen.getByRole('checkbox', { name: 'Remember my choice' }));
    fireEvent.click(screen.getByRole('button', { name: 'Keep both' }));
    expect(await answer!).toEqual({ action: 'rename' });
    expect(storage.getItem('ferry.duplicateAction')).toBe('rename');
    // remembered: no dialog next time
    expect(await prompt.ask('c.csv')).toEqual({ action: 'rename' });
    expect(screen.queryByRole('dialog')).toBeNull();
  });

  it('cancelling gives null (the job is not submitted)', async () => {
    const prompt = createDuplicatePrompt(new MemoryStorage());
    render(<DuplicateDialog prompt={prompt} />);
    let answer: Promise<DuplicateDecision | null>;
    act(() => {
      answer = prompt.ask('x');
    });
    fireEvent.keyDown(screen.getByRole('dialog'), { key: 'Escape' });
    expect(await answer!).toBeNull();
  });

  const facts = (size: number, date: string, hashes: Record<string, string> = {}) => ({ size, date_modified: date, hashes });
  const CONFLICTS: FileConflict[] = [
    { path: 'Data/a.csv', destination_path: 'Data/a.csv', source: facts(2048, '2026-03-01T10:00:00.000000Z', { md5: 'aa'.repeat(16) }), destination: { id: 'd1', ...facts(10, '2025-01-01T10:00:00.000000Z', { md5: 'bb'.repeat(16) }) } },
    { path: 'Data/b.csv', destination_path: 'Data/b.csv', source: facts(5, '2020-01-01T10:00:00.000000Z'), destination: { id: 'd2', ...facts(5, '2025-01-01T10:00:00.000000Z') } },
  ];

  it('per file: a hash both sides report is shown on both, marked when they match', async () => {
    const prompt = createDuplicatePrompt(new MemoryStorage());
    render(<DuplicateDialog prompt={prompt} />);
    const same = 'cd'.repeat(32);
    const conflicts: FileConflict[] = [
      { path: 'a.csv', destination_path: 'a.csv', source: facts(5, '2026-03-01T10:00:00.000000Z', { sha256: same }), destination: { id: 'd1', ...facts(5, '2025-01-01T10:00:00.000000Z', { md5: 'bb'.repeat(16), sha256: same }) } },
    ];
    act(() => {
      void prompt.ask('a.csv into Local folders › dest', { loadConflicts: async () => conflicts });
    });
    fireEvent.click(screen.getByRole('button', { name: 'Choose per file…' }));
    const row = within(await screen.findByRole('table', { name: '1 file is already there' })).getByRole('row', { name: /a\.csv/ });
    // the stored file's md5 comes first, but the sha256 is what both sides know
    expect(within(row).getAllByText(`sha256 ${'cd'.repeat(6)}…`, { exact: false })).toHaveLength(2);
    expect(row.textContent).toContain('(same content)');
  });

  it('per file: lists both sides side by side, a choice per file, and answers with the choices', async () => {
    const prompt = createDuplicatePrompt(new MemoryStorage());
    render(<DuplicateDialog prompt={prompt} />);
    const loadConflicts = vi.fn(async () => CONFLICTS);
    let answer: Promise<DuplicateDecision | null>;
    act(() => {
      answer = prompt.ask('Data into WebDAV › Inbox', { loadConflicts });
    });
    fireEvent.click(screen.getByRole('button', { name: 'Choose per file…' }));
    const table = await screen.findByRole('table', { name: '2 files are already there' });
    expect(loadConflicts).toHaveBeenCalledTimes(1);
    const first = within(table).getByRole('row', { name: /Data\/a\.csv/ });
    expect(first.textContent).toContain('2.0 KB');
    expect(first.textContent).toContain('10 B');
    expect(first.textContent).toContain(`md5 ${'aa'.repeat(6)}…`);
    expect(first.textContent).toContain(`md5 ${'bb'.repeat(6)}…`);
    expect(within(first).getAllByText('(newer)')).toHaveLength(1);
    // each starts at Skip; change one, then all, then one back
    expect((screen.getByRole('combobox', { name: 'Action for Data/a.csv' }) as HTMLSelectElement).value).toBe('ignore');
    fireEvent.change(screen.getByRole('combobox', { name: 'Action for Data/a.csv' }), { target: { value: 'rename' } });
    fireEvent.change(screen.getByRole('combobox', { name: 'Set all to' }), { target: { value: 'update' } });
    fireEvent.change(screen.getByRole('combobox', { name: 'Action for Data/b.csv' }), { target: { value: 'newer' } });
    fireEvent.click(screen.getByRole('button', { name: 'Copy with these choices' }));
    expect(await answer!).toEqual({ action: 'ignore', choices: { 'Data/a.csv': 'update', 'Data/b.csv': 'newer' } });
    expect(screen.queryByRole('dialog')).toBeNull();
  });

  it('per file: a listing that fails says so, and Back returns to the choice for all', async () => {
    const prompt = createDuplicatePrompt(new MemoryStorage());
    render(<DuplicateDialog prompt={prompt} />);
    act(() => {
      void prompt.ask('x', { loadConflicts: async () => Promise.reject(new Error('The WebDAV server is not answering.')) });
    });
    fireEvent.click(screen.getByRole('button', { name: 'Choose per file…' }));
    expect((await screen.findByRole('alert')).textContent).toContain('The WebDAV server is not answering.');
    expect((screen.getByRole('button', { name: 'Copy with these choices' }) as HTMLButtonElement).disabled).toBe(true);
    fireEvent.click(screen.getByRole('button', { name: 'Back' }));
    await waitFor(() => expect(screen.getByRole('dialog', { name: /already be there/ })).toBeTruthy());
  });
});

describe('account form', () => {
  const osf = { name: 'osf', readable_name: 'OSF', credential: 'remote', has_stored_token: false };
  function renderForm(api: Record<string, unknown>, target: typeof osf = osf) {
    const services = { api, session: { load: vi.fn(async () => undefined) } } as unknown as Services;
    render(
      <ServicesContext.Provider value={services}>
        <AccountForm target={target} />
      </ServicesContext.Provider>,
    );
  }

  it('a failed test shows the service sentence, saves nothing, and never writes the token to web storage', async () => {
    const setItem = vi.spyOn(Storage.prototype, 'setItem');
    const log = vi.spyOn(console, 'log');
    const saveToken = vi.fn(async () => undefined);
    const testToken = vi.fn(async () => {
      throw Object.assign(new Error('The OSF token is invalid or expired.'), { status: 401 });
    });
    renderForm({ saveToken, testToken, forgetToken: vi.fn() });
    const field = screen.getByLabelText('Token') as HTMLInputElement;
    expect(field.type).toBe('password');
    fireEvent.change(field, { target: { value: 'secret-token-123' } });
    fireEvent.click(screen.getByRole('button', { name: 'Test' }));
    await waitFor(() => expect(screen.getByRole('alert').textContent).toBe('The OSF token is invalid or expired.'));
    expect(testToken).toHaveBeenCalledWith('osf', 'secret-token-123');
    // a failed test saves nothing
    expect(saveToken).not.toHaveBeenCalled();
    expect((screen.getByRole('button', { name: 'Save' }) as HTMLButtonElement).disabled).toBe(true);
    const written = setItem.mock.calls.map((call) => call.join('=')).join('\n');
    expect(written).not.toContain('secret-token-123');
    expect(localStorage.length + sessionStorage.length).toBe(0);
    expect(JSON.stringify(log.mock.calls)).not.toContain('secret-token-123');
    setItem.mockRestore();
    log.mockRestore();
  });

  it('saves exactly what passed, only when asked, and an edit after the test takes the offer back', async () => {
    const saveToken = vi.fn(async () => undefined);
    const testToken = vi.fn(async () => undefined);
    renderForm({ saveToken, testToken, forgetToken: vi.fn() }, { ...osf, name: 'webdav', readable_name: 'WebDAV' });
    const save = screen.getByRole('button', { name: 'Save' }) as HTMLButtonElement;
    fireEvent.change(screen.getByLabelText('Server URL'), { target: { value: 'https://cloud.example.org/dav/' } });
    fireEvent.change(screen.getByLabelText('User'), { target: { value: 'alice' } });
    fireEvent.change(screen.getByLabelText('App password'), { target: { value: 'pw-1' } });
    fireEvent.click(screen.getByRole('button', { name: 'Test' }));
    await waitFor(() => expect(save.disabled).toBe(false));
    expect(saveToken).not.toHaveBeenCalled();
    // an edit after the test: Save is taken back until the new values pass
    fireEvent.change(screen.getByLabelText('App password'), { target: { value: 'pw-2' } });
    expect(save.disabled).toBe(true);
    fireEvent.click(screen.getByRole('button', { name: 'Test' }));
    await waitFor(() => expect(save.disabled).toBe(false));
    fireEvent.click(save);
    await waitFor(() => expect(saveToken).toHaveBeenCalledTimes(1));
    expect(saveToken).toHaveBeenCalledWith('webdav', JSON.stringify({ url: 'https://cloud.example.org/dav/', username: 'alice', password: 'pw-2' }));
    // after saving, no secret stays in the DOM
    await waitFor(() => expect((screen.getByLabelText('App password') as HTMLInputElement).value).toBe(''));
    expect(document.body.innerHTML).not.toContain('pw-2');
  });

  it('a missing field is said before anything is sent', async () => {
    const testToken = vi.fn(async () => undefined);
    renderForm({ saveToken: vi.fn(), testToken, forgetToken: vi.fn() }, { ...osf, name: 'dataverse', readable_name: 'Dataverse' });
    fireEvent.change(screen.getByLabelText('API token'), { target: { value: 'abc' } });
    fireEvent.click(screen.getByRole('button', { name: 'Test' }));
    await waitFor(() => expect(screen.getByRole('alert').textContent).toBe('Enter the installation url for Dataverse.'));
    expect(testToken).not.toHaveBeenCalled();
  });
});

describe('metadata review', () => {
  function open(question: Partial<Parameters<typeof askMetadataReview>[1]> = {}) {
    const ui = createUiStore();
    render(
      <ServicesContext.Provider value={{ ui } as unknown as Services}>
        <MetadataReviewDialog />
      </ServicesContext.Provider>,
    );
    const metadata = { title: 'survey', description: 'CTD casts', creators: '', keywords: '', license: '', publication_date: '' };
    let answer!: Promise<unknown>;
    act(() => {
      answer = askMetadataReview(ui, { target: 'zenodo', where: 'Zenodo', metadata, readError: null, passedThrough: [], ...question });
    });
    return { ui, metadata, answer };
  }

  it('answers the edited fields on Go ahead, and Undo edits puts the source\'s back', async () => {
    const { metadata, answer } = open({ passedThrough: ['related identifiers', 'funding'] });
    expect(screen.getByRole('dialog').textContent).toContain('Its related identifiers and funding go as the source gives them.');
    fireEvent.change(screen.getByLabelText('Title'), { target: { value: 'Survey 2024' } });
    fireEvent.change(screen.getByLabelText('Publication date'), { target: { value: '2024-05-01' } });
    fireEvent.click(screen.getByRole('button', { name: 'Undo edits' }));
    expect((screen.getByLabelText('Title') as HTMLInputElement).value).toBe('survey');
    fireEvent.change(screen.getByLabelText('Title'), { target: { value: 'Survey 2024' } });
    fireEvent.click(screen.getByRole('button', { name: 'Go ahead' }));
    expect(await answer).toEqual({ ...metadata, title: 'Survey 2024' });
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
  });

  it('says when the source could not be read, and Cancel answers null', async () => {
    const { answer } = open({ readError: 'OSF is not answering (HTTP 503).' });
    expect(screen.getByRole('alert').textContent).toContain("The source's metadata could not be read: OSF is not answering (HTTP 503).");
    fireEvent.click(screen.getByRole('button', { name: 'Cancel' }));
    expect(await answer).toBeNull();
  });
});

describe('per-file choices sent small', () => {
  it('the most common choice becomes the action for all, and only the others stay per file', () => {
    expect(compacted({ action: 'ignore', choices: { a: 'rename', b: 'rename', c: 'update' } })).toEqual({ action: 'rename', choices: { c: 'update' } });
    expect(compacted({ action: 'ignore', choices: { a: 'newer', b: 'newer' } })).toEqual({ action: 'newer' });
    expect(compacted({ action: 'update' })).toEqual({ action: 'update' });
  });
});

describe('folder mode', () => {
  it('offers the destination’s modes with the last choice preselected, answers the one chosen, and Escape cancels', async () => {
    const ui = createUiStore();
    render(<FolderModeDialog ui={ui} />);
    let answer: Promise<string | null>;
    act(() => {
      answer = askFolderMode(ui, { where: 'Zenodo', modes: ['flatten', 'zip-per-folder', 'bag'], initial: 'zip-per-folder' });
    });
    const dialog = screen.getByRole('dialog', { name: 'Keep folders as' });
    const group = within(dialog).getByRole('group', { name: 'Keep folders as' });
    expect(within(group).getAllByRole('radio').map((radio) => (radio as HTMLInputElement).checked)).toEqual([false, true, false]);
    fireEvent.click(within(group).getByRole('radio', { name: /One BagIt ZIP/ }));
    fireEvent.click(within(dialog).getByRole('button', { name: 'Continue' }));
    expect(await answer!).toBe('bag');
    expect(screen.queryByRole('dialog')).toBeNull();

    act(() => {
      answer = askFolderMode(ui, { where: 'Zenodo', modes: ['flatten', 'zip-per-folder', 'bag'], initial: 'flatten' });
    });
    fireEvent.keyDown(screen.getByRole('dialog'), { key: 'Escape' });
    expect(await answer!).toBeNull();
  });
});
