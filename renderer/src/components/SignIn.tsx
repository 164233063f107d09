// Browser mode without a key (no #key= in the address, nothing kept in this tab): say how
// to get signed in, and take a pasted key. `ferry serve` never prints the key, so the two
// ways are `ferry open` (it puts the key in the fragment) or copying it from endpoint.json.
// A pasted key is checked with GET /app/session before the app starts.
import { useId, useState, type FormEvent } from 'react';
import { checkAccessKey } from '../api/connection.js';

export interface SignInProps {
  /** the page's own origin, where the core answers */
  url: string;
  /** why the sign-in screen shows instead of the app, when there is more to say */
  notice?: string | null;
  onSignedIn(accessKey: string): void;
  fetchImpl?: typeof fetch;
}

/** What people paste: the value with or without its JSON quotes, maybe a trailing comma or newline. */
export function cleanPastedKey(raw: string): string {
  return raw
    .trim()
    .replace(/,$/, '')
    .replace(/^"access_key"\s*:\s*/, '')
    .replace(/^"(.*)"$/, '$1')
    .trim();
}

export function SignIn({ url, notice, onSignedIn, fetchImpl }: SignInProps) {
  const [key, setKey] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const fieldId = useId();
  const helpId = useId();

  async function submit(event: FormEvent): Promise<void> {
    event.preventDefault();
    const candidate = cleanPastedKey(key);
    if (!candidate) {
      setProblem('Paste the access key first.');
      return;
    }
    setBusy(true);
    setProblem(null);
    const check = await checkAccessKey(url, candidate, fetchImpl);
    setBusy(false);
    if (check.ok) {
      setKey('');
      onSignedIn(candidate);
    } else {
      setProblem(check.message);
    }
  }

  return (
    <main className="sign-in" aria-labelledby={`${fieldId}-title`}>
      <h1 id={`${fieldId}-title`}>Sign in to Ferry</h1>
      <p>
        This page works with the Ferry running on this computer. To keep other pages and programs out, it needs that
        Ferry&apos;s <strong>access key</strong>. Ferry never prints the key, so there are two ways in:
      </p>
      {notice ? (
        <p className="message info" role="status">
          <span>{notice}</span>
        </p>
      ) : null}
      <section className="sign-in-way" aria-label="Open Ferry signed in">
        <h2>1. Let Ferry open this page for you</h2>
        <p>In a terminal on this computer, run</p>
        <pre>
          <code>ferry open</code>
        </pre>
        <p className="hint">
          From a source checkout: <code>node bin/ferry.js open</code>. If you started Ferry with{' '}
          <code>--data-dir DIR</code>, add the same <code>--data-dir DIR</code>.
        </p>
      </section>
      <section className="sign-in-way" aria-label="Paste the access key">
        <h2>2. Or paste the access key</h2>
        <p id={helpId}>
          Open <code>endpoint.json</code> in Ferry&apos;s data directory — by default{' '}
          <code>~/.config/ferry/endpoint.json</code>, or the folder given with <code>--data-dir</code> — and copy the
          value of <code>access_key</code>.
        </p>
        <form className="sign-in-form" onSubmit={(event) => void submit(event)}>
          <label htmlFor={fieldId}>Access key</label>
          <input
            id={fieldId}
            type="password"
            name="ferry-access-key"
            autoComplete="off"
            spellCheck={false}
            aria-describedby={helpId}
            value={key}
            onChange={(event) => setKey(event.target.value)}
          />
          <button type="submit" disabled={busy}>
            {busy ? 'Checking…' : 'Sign in'}
          </button>
        </form>
        {problem ? (
          <p className="message error" role="alert">
            <span>{problem}</span>
          </p>
        ) : null}
      </section>
      <p className="hint">
        The key stays in this tab only, until you close it. It is never saved in the browser or put in an address.
      </p>
    </main>
  );
}
