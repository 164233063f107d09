import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

// The compute threads' script, made from compute/compute-worker.ts, a real typed module.
//
// A thread evaluates it from a string (`new Worker(source, { eval: true })`) rather than
// loading a file: the same code then runs from the electron-vite bundle, from the desktop
// app's asar archive (whose files a thread may not be able to open) and from the TypeScript
// sources under vitest or tsx, with no path to find at run time.
//
// The build (electron.vite.config.ts) bundles it once and puts the text in the bundle as
// __FERRY_COMPUTE_WORKER__; run from the sources, it is bundled at its first use with
// esbuild, a development dependency (~0.15 s, once a process).

declare const __FERRY_COMPUTE_WORKER__: string | undefined;

let bundled: string | null = null;

/** The script each compute thread runs. */
export function computeWorkerSource(): string {
  if (typeof __FERRY_COMPUTE_WORKER__ === 'string') return __FERRY_COMPUTE_WORKER__;
  bundled ??= bundleComputeWorker();
  return bundled;
}

/** compute-worker.ts and what it imports as one CommonJS script (what the build embeds). */
export function bundleComputeWorker(): string {
  const require = createRequire(import.meta.url);
  const esbuild = require('esbuild') as typeof import('esbuild');
  const built = esbuild.buildSync({
    entryPoints: [fileURLToPath(new URL('./compute-worker.ts', import.meta.url))],
    bundle: true,
    write: false,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    logLevel: 'silent',
  });
  return built.outputFiles[0]!.text;
}
