import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { defaultDataDir, defaultWorkspace } from './core/config.js';
import { startFerry, type EndpointFile } from './host.js';

const USAGE = `Usage:
  ferry serve [--host 127.0.0.1] [--port N|0] [--data-dir DIR] [--workspace DIR]
              [--library DIR]... [--renderer-dir DIR] [--open]
              [--osf-api-url URL] [--github-api-url URL] [--gitlab-url URL]
              [--zenodo-url URL] [--figshare-api-url URL] [--dataverse-url URL]
              [--invenio-url URL]
      Runs Ferry headless: the /api_v1/ API and the UI for a browser.
  ferry open [--data-dir DIR]
      Opens the running Ferry's UI in the default browser, signed in.
  ferry help`;

const OPTIONS = {
  host: { type: 'string', default: '127.0.0.1' },
  port: { type: 'string', default: '0' },
  'data-dir': { type: 'string' },
  workspace: { type: 'string' },
  library: { type: 'string', multiple: true },
  'renderer-dir': { type: 'string' },
  open: { type: 'boolean', default: false },
  'osf-api-url': { type: 'string' },
  'github-api-url': { type: 'string' },
  'gitlab-url': { type: 'string' },
  'zenodo-url': { type: 'string' },
  'figshare-api-url': { type: 'string' },
  'dataverse-url': { type: 'string' },
  'invenio-url': { type: 'string' },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

export async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const command = positionals[0] ?? 'help';
  if (values.help || command === 'help') {
    console.log(USAGE);
    return 0;
  }
  const dataDir = path.resolve(values['data-dir'] ?? defaultDataDir());
  if (command === 'open') return openBrowser(dataDir);
  if (command !== 'serve') {
    console.error(`Unknown command '${command}'.\n\n${USAGE}`);
    return 2;
  }

  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`--port must be a number from 0 to 65535 (0 picks a free port); got '${values.port}'.`);
    return 2;
  }
  if (!isLoopbackHost(values.host)) {
    console.warn(
      `Warning: --host ${values.host} makes Ferry's API reachable from other machines. It is plain HTTP: the access key and ` +
        'tokens would cross the network unencrypted, and anyone with the key can read and change your workspace.',
    );
  }
  const rendererDir = values['renderer-dir'] ? path.resolve(values['renderer-dir']) : bundledRendererDir();
  const running = await startFerry({
    dataDir,
    workspace: path.resolve(values.workspace ?? defaultWorkspace()),
    libraryDirs: (values.library ?? []).map((dir) => path.resolve(dir)),
    rendererDir,
    host: values.host,
    port,
    remotes: definedOnly({
      osfApiUrl: values['osf-api-url'],
      githubApiUrl: values['github-api-url'],
      gitlabUrl: values['gitlab-url'],
      zenodoUrl: values['zenodo-url'],
      figshareApiUrl: values['figshare-api-url'],
      dataverseUrl: values['dataverse-url'],
      invenioUrl: values['invenio-url'],
    }),
  });

  console.log(`Ferry is serving at ${running.url}`);
  console.log(`The access key and port are in ${running.endpointFile} (readable by you only).`);
  if (rendererDir) {
    const dataDirArg = values['data-dir'] ? ` --data-dir ${values['data-dir']}` : '';
    console.log(`Open the UI signed in with '${invocation()} open${dataDirArg}', or open ${running.url} and paste the access key from endpoint.json.`);
  }
  else console.log('The UI is not built (run npm run build); the API is available.');
  if (running.keychainWarning) console.warn(running.keychainWarning);
  if (values.open) await openBrowser(dataDir);

  await new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (signal: NodeJS.Signals) => {
      if (stopping) return;
      stopping = true;
      console.log(`${signal}: stopping; running jobs will resume at the next start.`);
      running.close().then(resolve, (error) => {
        console.error('Ferry did not stop cleanly:', (error as Error).message);
        resolve();
      });
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  return 0;
}

/** How the user ran us: `ferry` when installed as a command, else `node <path to the bin>`. */
function invocation(): string {
  const script = process.argv[1] ?? 'ferry';
  if (path.basename(script) === 'ferry') return 'ferry';
  return `node ${path.relative(process.cwd(), script) || script}`;
}

function definedOnly<T extends object>(values: T): Partial<T> {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as Partial<T>;
}

/** out/main/cli.js → out/renderer, when the renderer was built. */
function bundledRendererDir(): string | null {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const candidate = path.resolve(here, '../renderer');
  return existsSync(path.join(candidate, 'index.html')) ? candidate : null;
}

async function openBrowser(dataDir: string): Promise<number> {
  let endpoint: EndpointFile;
  try {
    endpoint = JSON.parse(await readFile(path.join(dataDir, 'endpoint.json'), 'utf8')) as EndpointFile;
  } catch {
    console.error(`No running Ferry found: ${path.join(dataDir, 'endpoint.json')} is missing. Start one with 'ferry serve'.`);
    return 1;
  }
  // The key travels in the fragment, which browsers never send to a server; it is not printed.
  const url = `${endpoint.url}#key=${endpoint.access_key}`;
  const opener = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open';
  return new Promise((resolve) => {
    const child = spawn(opener, [url], { stdio: 'ignore', detached: true });
    child.on('error', () => {
      console.error(`Could not start a browser (${opener}). Open ${endpoint.url} and paste the access key from endpoint.json.`);
      resolve(1);
    });
    child.on('spawn', () => {
      child.unref();
      resolve(0);
    });
  });
}

const invokedDirectly = process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(`Ferry could not start: ${error instanceof Error ? error.message : String(error)}`);
      process.exit(1);
    },
  );
}

function isLoopbackHost(host: string): boolean {
  return /^(127(\.\d{1,3}){3}|localhost|::1|\[::1\])$/i.test(host);
}
