import { resolve } from 'node:path';
import { defineConfig } from 'electron-vite';
import react from '@vitejs/plugin-react';
import { bundleComputeWorker } from './electron/core/compute/worker-source';

// One build for the three Electron parts and the headless CLI. Dependencies stay external
// in main (node_modules ships with the app); the preload is CommonJS so the renderer can
// stay sandboxed.
export default defineConfig({
  main: {
    // the compute threads' script, bundled from its typed module once (compute/worker-source.ts)
    define: { __FERRY_COMPUTE_WORKER__: JSON.stringify(bundleComputeWorker()) },
    build: {
      outDir: 'out/main',
      rollupOptions: {
        input: {
          index: resolve('electron/main/index.ts'),
          cli: resolve('electron/cli.ts'),
          // loaded by bin/ferry.js before the CLI: the memory settings' launcher, on its own
          launch: resolve('electron/launch/relaunch.ts'),
        },
      },
    },
  },
  preload: {
    build: {
      outDir: 'out/preload',
      rollupOptions: {
        input: { index: resolve('electron/preload/index.ts') },
        output: { format: 'cjs', entryFileNames: '[name].cjs' },
      },
    },
  },
  renderer: {
    root: 'renderer',
    plugins: [react()],
    build: {
      outDir: resolve('out/renderer'),
      minify: true,
      rollupOptions: { input: { index: resolve('renderer/index.html') } },
    },
  },
});
