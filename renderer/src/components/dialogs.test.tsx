import { afterEach, describe, expect, it, vi } from 'vitest';
import { act, cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { MemoryStorage } from '../test-support.js';
import { createDuplicatePrompt } from '../stores/duplicates.js';
import { DuplicateDialog } from './DuplicateDialog.js';
import { TokenForm } from './AccountsDialog.js';
import { ServicesContext, type Services } from '../services.js';

afterEach(cleanup);

describe('duplicate prompt', () => {
  it('asks once, answers with the choice, and remembers it only when asked to', async () => {
    const storage = new MemoryStorage();
    const prompt = createDuplicatePrompt(storage);
    render(<DuplicateDialog prompt={prompt} />);
    let answer: Promise<string | null>;
    act(() => {
      answer = prompt.ask('a.csv into OSF › Project');
    });
    expect(screen.getByRole('dialog', { name: /already be there/ }).textContent).toContain('a.csv into OSF › Project');
    fireEvent.click(screen.getByRole('button', { name: 'Replace changed files' }));
    expect(await answer!).toBe('update');
    expect(storage.getItem('ferry.duplicateAction')).toBeNull();
    expect(screen.queryByRole('dialog')).toBeNull();

    act(() => {
      answer = prompt.ask('b.csv');
    });
    fireEvent.click(screen.getByRole('checkbox', { name: 'Remember my choice' }));
    fireEvent.click(screen.getByRole('button', { name: 'Skip existing files' }));
    expect(await answer!).toBe('ignore');
    expect(storage.getItem('ferry.duplicateAction')).toBe('ignore');
    // remembered: no dialog next time
    expect(await prompt.ask('c.csv')).toBe('ignore');
    expect(screen.queryByRole('dialog')).toBeNull();
  });

  it('cancelling gives null (the job is not submitted)', async () => {
    const prompt = createDuplicatePrompt(new MemoryStorage());
    render(<DuplicateDialog prompt={prompt} />);
    let answer: Promise<string | null>;
    act(() => {
      answer = prompt.ask('x');
    });
    fireEvent.keyDown(screen.getByRole('dialog'), { key: 'Escape' });
    expect(await answer!).toBeNull();
  });
});

describe('token form', () => {
  it('sends the token to the core only, clears the field, and never writes it to web storage', async () => {
    const setItem = vi.spyOn(Storage.prototype, 'setItem');
    const log = vi.spyOn(console, 'log');
    const saveToken = vi.fn(async () => undefined);
    const testToken = vi.fn(async () => {
      throw Object.assign(new Error('The OSF token is invalid or expired.'), { status: 401 });
    });
    const services = {
      api: { saveToken, testToken, forgetToken: vi.fn() },
      session: { load: vi.fn(async () => undefined) },
    } as unknown as Services;
    render(
      <ServicesContext.Provider value={services}>
        <TokenForm target={{ name: 'osf', readable_name: 'OSF', credential: 'remote', has_stored_token: false }} />
      </ServicesContext.Provider>,
    );
    const field = screen.getByLabelText('Token') as HTMLInputElement;
    expect(field.type).toBe('password');
    fireEvent.change(field, { target: { value: 'secret-token-123' } });
    fireEvent.click(screen.getByRole('button', { name: 'Test token' }));
    await waitFor(() => expect(screen.getByRole('alert').textContent).toBe('The OSF token is invalid or expired.'));
    expect(saveToken).toHaveBeenCalledWith('osf', 'secret-token-123');
    expect(field.value).toBe('');
    const written = setItem.mock.calls.map((call) => call.join('=')).join('\n');
    expect(written).not.toContain('secret-token-123');
    expect(localStorage.length + sessionStorage.length).toBe(0);
    expect(JSON.stringify(log.mock.calls)).not.toContain('secret-token-123');
    setItem.mockRestore();
    log.mockRestore();
  });
});
