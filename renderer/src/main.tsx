import { createRoot } from 'react-dom/client';
import type { Connection } from '../../shared/ipc.js';
import { messageOf } from './api/client.js';
import {
  browserBridge,
  checkAccessKey,
  forgetAccessKey,
  MissingAccessKeyError,
  resolveConnection,
} from './api/connection.js';
import { Root } from './components/Root.js';
import './styles.css';

async function start(): Promise<void> {
  const root = createRoot(document.getElementById('root')!);
  const url = `${window.location.origin}/`;
  try {
    const bridge = browserBridge();
    let connection: Connection | null = null;
    let signInNotice: string | null = null;
    try {
      connection = await resolveConnection({
        location: window.location,
        history: window.history,
        sessionStorage: window.sessionStorage,
        bridge,
      });
    } catch (error) {
      if (!(error instanceof MissingAccessKeyError)) throw error;
    }
    // Browser mode: a key from an old link or an earlier run may no longer open this Ferry.
    if (connection && !bridge) {
      const check = await checkAccessKey(connection.url, connection.accessKey);
      if (!check.ok && check.reason === 'rejected') {
        forgetAccessKey(window.sessionStorage);
        connection = null;
        signInNotice =
          'The key this page had is not accepted by the Ferry running now (it may have been started with another data directory). Sign in again.';
      }
    }
    root.render(
      <Root
        connection={connection}
        url={url}
        bridge={bridge}
        keyStorage={window.sessionStorage}
        signInNotice={signInNotice}
      />,
    );
  } catch (error) {
    root.render(
      <main className="fatal" role="alert">
        <h1>Ferry</h1>
        <p>{messageOf(error)}</p>
      </main>,
    );
  }
}

void start();
