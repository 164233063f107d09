// `npm run bench [-- --smoke|--full|--runs N|--scale X]`: builds Ferry if needed, then runs
// bench/run.ts (the server under test is the built CLI, as users run it).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

if (!existsSync('out/main/cli.js') || process.env.FERRY_REBUILD) {
  const build = spawnSync('npx', ['electron-vite', 'build'], { stdio: 'inherit' });
  if (build.status !== 0) process.exit(build.status ?? 1);
}
const result = spawnSync(process.execPath, ['--import', 'tsx', 'bench/run.ts', ...process.argv.slice(2)], { stdio: 'inherit' });
process.exit(result.status ?? 1);
