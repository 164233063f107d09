#!/usr/bin/env node
// The `ferry` command: the built CLI (out/main/cli.js, made by `npm run build`).
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const cli = fileURLToPath(new URL('../out/main/cli.js', import.meta.url));
if (!existsSync(cli)) {
  console.error('Ferry is not built yet: run `npm run build` in the project folder first.');
  process.exit(1);
}
const { main } = await import(pathToFileURL(cli).href);
process.exit(await main(process.argv.slice(2)));
