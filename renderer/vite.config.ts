import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// The renderer on its own: used by the Vitest `renderer` project (jsdom) and by anyone
// running `vite` in this folder. The production build goes through electron.vite.config.ts.
export default defineConfig({
  plugins: [react()],
  // assets are served from the app's own origin root by the local server
  base: './',
});
