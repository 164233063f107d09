// Signed in → the app; not (browser mode without a usable key) → the sign-in screen, which
// hands over a checked key and the app starts as if the key had come in the fragment.
import { StrictMode, useMemo, useState } from 'react';
import type { Connection, FerryBridge } from '../../../shared/ipc.js';
import { createApiClient } from '../api/client.js';
import { rememberAccessKey } from '../api/connection.js';
import { createServices, ServicesContext } from '../services.js';
import { App } from './App.js';
import { SignIn } from './SignIn.js';

export interface RootProps {
  /** null = show the sign-in screen */
  connection: Connection | null;
  /** the page's origin with a trailing slash: where the core answers in browser mode */
  url: string;
  bridge?: FerryBridge;
  /** where a key that worked is kept for reloads (the tab's sessionStorage) */
  keyStorage: Pick<Storage, 'setItem'>;
  signInNotice?: string | null;
}

export function Root({ connection: initial, url, bridge, keyStorage, signInNotice }: RootProps) {
  const [connection, setConnection] = useState<Connection | null>(initial);
  const services = useMemo(
    () => (connection ? createServices({ api: createApiClient(connection), bridge }) : null),
    [connection, bridge],
  );
  if (!services) {
    return (
      <SignIn
        url={url}
        notice={signInNotice}
        onSignedIn={(accessKey) => {
          rememberAccessKey(keyStorage, accessKey);
          setConnection({ url, accessKey });
        }}
      />
    );
  }
  return (
    <StrictMode>
      <ServicesContext.Provider value={services}>
        <App />
      </ServicesContext.Provider>
    </StrictMode>
  );
}
