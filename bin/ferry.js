#!/usr/bin/env node
// The `ferry` command: the built CLI (out/main/cli.js, made by `npm run build`). `ferry serve`
// runs its server in a child process started with the memory settings (out/main/launch.js,
// electron/launch/); FERRY_MEMORY_SETTINGS=off runs it here. The launcher is loaded alone, before
// the CLI, so the process that stays beside the server holds no more than Node itself.
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const cli = fileURLToPath(new URL('../out/main/cli.js', import.meta.url));
const launcher = fileURLToPath(new URL('../out/main/launch.js', import.meta.url));
if (!existsSync(cli) || !existsSync(launcher)) {
  console.error('Ferry is not built yet: run `npm run build` in the project folder first.');
  process.exit(1);
}
const args = process.argv.slice(2);
if (args[0] === 'serve') {
  const { relaunchWithMemorySettings } = await import(pathToFileURL(launcher).href);
  let code;
  try {
    code = await relaunchWithMemorySettings(fileURLToPath(import.meta.url), args);
  } catch (error) {
    console.error(error.message);
    process.exit(2);
  }
  if (code !== null) process.exit(code);
}
const { main } = await import(pathToFileURL(cli).href);
process.exit(await main(args));
