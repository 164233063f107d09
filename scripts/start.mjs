// `npm start`: the desktop app when an Electron runtime is available, otherwise the same
// core, API and UI headless (`ferry serve`), opened in a browser.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const extraArgs = process.argv.slice(2);

function electronBinary() {
  try {
    const binary = require('electron');
    return typeof binary === 'string' && existsSync(binary) ? { binary } : { reason: 'the Electron binary is missing' };
  } catch (error) {
    return { reason: 'the Electron runtime is not installed (npm installs only the electron package; its binary comes from GitHub on first use, which needs network access to GitHub)' };
  }
}

function ensureBuilt() {
  if (existsSync('out/main/cli.js') && existsSync('out/renderer/index.html') && !process.env.FERRY_REBUILD) return;
  console.log('Building Ferry (npm run build)...');
  const result = spawnSync('npm', ['run', 'build'], { stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

function run(command, args) {
  const child = spawn(command, args, { stdio: 'inherit' });
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code) => process.exit(code ?? 0));
}

ensureBuilt();
const electron = electronBinary();
const headless = !process.env.DISPLAY && !process.env.WAYLAND_DISPLAY && process.platform === 'linux';
if (electron.binary && !headless) {
  run(electron.binary, ['.', ...extraArgs]);
} else {
  const why = electron.binary ? 'there is no display to open a window on' : electron.reason;
  console.log(`Starting Ferry in browser mode because ${why}.`);
  console.log('The same UI is served to your browser; Ferry tries to open it for you, signed in.');
  run(process.execPath, ['bin/ferry.js', 'serve', '--open', ...extraArgs]);
}
