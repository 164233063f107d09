// `npm start`: the desktop app when an Electron runtime is available, otherwise the same
// core, API and UI headless (`ferry serve`), opened in a browser.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const require = createRequire(import.meta.url);
const extraArgs = process.argv.slice(2);

function electronBinary() {
  try {
    const binary = require('electron');
    return typeof binary === 'string' && existsSync(binary) ? { binary } : { reason: 'the Electron binary is missing' };
  } catch {
    return { reason: 'the Electron runtime is not installed' };
  }
}

/**
 * npm does not run dependencies' install scripts here (.npmrc), so the Electron binary is
 * fetched on first start instead: from GitHub, which offline machines cannot reach.
 */
function fetchElectron() {
  if (process.env.FERRY_NO_ELECTRON_DOWNLOAD || !existsSync('node_modules/electron/install.js')) return false;
  console.log('Fetching the Electron runtime (once)...');
  const result = spawnSync(process.execPath, ['node_modules/electron/install.js'], { stdio: 'ignore', timeout: 300_000 });
  return result.status === 0;
}

function ensureBuilt() {
  if (existsSync('out/main/cli.js') && existsSync('out/main/launch.js') && existsSync('out/renderer/index.html') && !process.env.FERRY_REBUILD) return;
  console.log('Building Ferry (npm run build)...');
  const result = spawnSync('npm', ['run', 'build'], { stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

function run(command, args, env = process.env) {
  const child = spawn(command, args, { stdio: 'inherit', env });
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code) => process.exit(code ?? 0));
}

ensureBuilt();
let electron = electronBinary();
if (!electron.binary && fetchElectron()) electron = electronBinary();
if (!electron.binary) electron.reason += ' and could not be downloaded (it comes from GitHub; is this machine offline?)';
const headless = !process.env.DISPLAY && !process.env.WAYLAND_DISPLAY && process.platform === 'linux';
if (electron.binary && !headless) {
  // the server runs in Electron's main process: its memory settings go on Electron's command
  // line and environment (electron/launch/memory-settings.ts; FERRY_MEMORY_SETTINGS=off: none)
  const { electronMemorySettings } = await import(pathToFileURL(path.resolve('out/main/launch.js')).href);
  let settings;
  try {
    settings = electronMemorySettings(extraArgs, process.env);
  } catch (error) {
    console.error(error.message);
    process.exit(2);
  }
  run(electron.binary, ['.', ...(settings?.args ?? extraArgs)], settings?.env ?? process.env);
} else {
  const why = electron.binary ? 'there is no display to open a window on' : electron.reason;
  console.log(`Starting Ferry in browser mode because ${why}.`);
  console.log('The same UI is served to your browser; Ferry tries to open it for you, signed in.');
  run(process.execPath, ['bin/ferry.js', 'serve', '--open', ...extraArgs]);
}
