// `npm run bench [-- --smoke|--full|--runs N|--scale X]`: builds Ferry if needed, then runs
// bench/run.ts (the server under test is the built CLI, as users run it).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

const BUILT = 'out/main/cli.js';
/** what the build is made from: a build older than any of it would measure other code */
const SOURCES = ['electron', 'shared', 'renderer', 'package.json', 'electron.vite.config.ts'];

function newestChange(entry) {
  if (!existsSync(entry)) return 0;
  const stat = statSync(entry);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const name of readdirSync(entry)) {
    if (name === 'node_modules') continue;
    newest = Math.max(newest, newestChange(path.join(entry, name)));
  }
  return newest;
}

const stale = !existsSync(BUILT) || statSync(BUILT).mtimeMs < Math.max(...SOURCES.map(newestChange));
if (stale || process.env.FERRY_REBUILD) {
  const build = spawnSync('npx', ['electron-vite', 'build'], { stdio: 'inherit' });
  if (build.status !== 0) process.exit(build.status ?? 1);
}
const result = spawnSync(process.execPath, ['--import', 'tsx', 'bench/run.ts', ...process.argv.slice(2)], { stdio: 'inherit' });
process.exit(result.status ?? 1);
