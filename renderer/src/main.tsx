import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { browserBridge, resolveConnection } from './api/connection.js';
import { createApiClient, messageOf } from './api/client.js';
import { App } from './components/App.js';
import { createServices, ServicesContext } from './services.js';
import './styles.css';

async function start(): Promise<void> {
  const root = createRoot(document.getElementById('root')!);
  try {
    const bridge = browserBridge();
    const connection = await resolveConnection({
      location: window.location,
      history: window.history,
      sessionStorage: window.sessionStorage,
      bridge,
    });
    const services = createServices({ api: createApiClient(connection), bridge });
    root.render(
      <StrictMode>
        <ServicesContext.Provider value={services}>
          <App />
        </ServicesContext.Provider>
      </StrictMode>,
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
