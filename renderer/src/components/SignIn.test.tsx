import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { checkAccessKey } from '../api/connection.js';
import { MemoryStorage } from '../test-support.js';
import { Root } from './Root.js';
import { cleanPastedKey, SignIn } from './SignIn.js';

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  localStorage.clear();
  sessionStorage.clear();
});

const KEY = 'k3y-0123456789abcdef';

/** A core that knows one key: /app/session answers 200 for it, 401 otherwise. */
function fakeCore(calls: { url: string; auth: string | null }[] = []) {
  return vi.fn(async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = String(input);
    const auth = new Headers(init?.headers).get('authorization');
    calls.push({ url, auth });
    if (auth !== `Bearer ${KEY}`) {
      return new Response(JSON.stringify({ error: 'The access key is missing or wrong.', code: 'unauthorized' }), { status: 401 });
    }
    if (url.endsWith('/app/session')) {
      return Response.json({
        version: '0.1.0',
        keychain: { persistent: false, description: 'memory' },
        targets: [
          { name: 'local', readable_name: 'Local folders', credential: 'access-key', has_stored_token: false, can_verify: false },
          { name: 'offline', readable_name: 'Downloaded ZIPs', credential: 'access-key', has_stored_token: false, can_verify: true },
        ],
      });
    }
    if (url.endsWith('/api_v1/targets/')) {
      const flags = { resource_collection: true, resource_detail: true, resource_download: true, resource_upload: false };
      return Response.json([
        { name: 'local', readable_name: 'Local folders', supported_actions: flags, supported_hash_algorithms: ['md5'], detail: '' },
        { name: 'offline', readable_name: 'Downloaded ZIPs', supported_actions: flags, supported_hash_algorithms: ['md5'], detail: '' },
      ]);
    }
    if (url.endsWith('/api_v1/jobs/')) return Response.json([]);
    if (url.includes('/api_v1/jobs/events/')) return new Promise<Response>(() => undefined); // stays open
    if (url.includes('/resources/')) return Response.json([]);
    return new Response('{}', { status: 404 });
  });
}

describe('sign-in screen', () => {
  it('explains both ways in, with a password field', () => {
    render(<SignIn url="http://127.0.0.1:4000/" onSignedIn={vi.fn()} />);
    const page = screen.getByRole('main');
    expect(page.textContent).toContain('ferry open');
    expect(page.textContent).toContain('node bin/ferry.js open');
    expect(page.textContent).toContain('~/.config/ferry/endpoint.json');
    expect(page.textContent).toContain('access_key');
    expect(page.textContent).not.toContain('printed');
    expect((screen.getByLabelText('Access key') as HTMLInputElement).type).toBe('password');
    expect(screen.getByRole('button', { name: 'Sign in' })).toBeTruthy();
  });

  it('checks the key with GET /app/session in the Authorization header only; a wrong key gets a sentence', async () => {
    const calls: { url: string; auth: string | null }[] = [];
    const onSignedIn = vi.fn();
    render(<SignIn url="http://127.0.0.1:4000/" onSignedIn={onSignedIn} fetchImpl={fakeCore(calls) as typeof fetch} />);
    fireEvent.change(screen.getByLabelText('Access key'), { target: { value: 'wrong-key' } });
    fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    await waitFor(() => expect(screen.getByRole('alert').textContent).toContain('That key was not accepted'));
    expect(onSignedIn).not.toHaveBeenCalled();
    expect(calls).toEqual([{ url: 'http://127.0.0.1:4000/app/session', auth: 'Bearer wrong-key' }]);
  });

  it('accepts a key pasted with its JSON quotes and hands it over', async () => {
    const onSignedIn = vi.fn();
    render(<SignIn url="http://127.0.0.1:4000/" onSignedIn={onSignedIn} fetchImpl={fakeCore() as typeof fetch} />);
    fireEvent.change(screen.getByLabelText('Access key'), { target: { value: ` "${KEY}",\n` } });
    fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    await waitFor(() => expect(onSignedIn).toHaveBeenCalledWith(KEY));
    expect((screen.getByLabelText('Access key') as HTMLInputElement).value).toBe('');
  });

  it('says so when the core does not answer, and asks for a key when the field is empty', async () => {
    const down = (async () => {
      throw new TypeError('Failed to fetch');
    }) as typeof fetch;
    expect(await checkAccessKey('http://127.0.0.1:1/', 'x', down)).toMatchObject({ ok: false, reason: 'unreachable' });
    render(<SignIn url="http://127.0.0.1:4000/" onSignedIn={vi.fn()} fetchImpl={down} />);
    fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    expect(screen.getByRole('alert').textContent).toBe('Paste the access key first.');
    fireEvent.change(screen.getByLabelText('Access key'), { target: { value: 'abc' } });
    fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    await waitFor(() => expect(screen.getByRole('alert').textContent).toContain('did not answer'));
  });

  it('cleans what people paste', () => {
    expect(cleanPastedKey('  abc  ')).toBe('abc');
    expect(cleanPastedKey('"abc"')).toBe('abc');
    expect(cleanPastedKey('"access_key": "abc",')).toBe('abc');
  });
});

describe('Root', () => {
  it('after sign-in the app starts; the key is kept in the tab only, never in localStorage or the address', async () => {
    const fetchMock = fakeCore();
    vi.stubGlobal('fetch', fetchMock);
    const keyStorage = new MemoryStorage();
    const before = window.location.href;
    render(<Root connection={null} url="http://127.0.0.1:4000/" keyStorage={keyStorage} />);
    fireEvent.change(screen.getByLabelText('Access key'), { target: { value: KEY } });
    fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    await waitFor(() => expect(screen.getByRole('region', { name: 'Left pane' })).toBeTruthy());
    expect(screen.getByRole('region', { name: 'Right pane' })).toBeTruthy();
    expect(keyStorage.getItem('ferry.accessKey')).toBe(KEY);
    expect(JSON.stringify({ ...localStorage })).not.toContain(KEY);
    expect(window.location.href).toBe(before);
    // every request after sign-in carries the key as Bearer, none in a URL
    await waitFor(() => expect(fetchMock.mock.calls.length).toBeGreaterThan(3));
    for (const [input] of fetchMock.mock.calls) expect(String(input)).not.toContain(KEY);
  });

  it('shows why it asks again', () => {
    render(
      <Root connection={null} url="http://127.0.0.1:4000/" keyStorage={new MemoryStorage()} signInNotice="The key this page had is not accepted." />,
    );
    expect(screen.getByRole('status').textContent).toContain('not accepted');
  });
});
