// Builds the renderer into renderer/dist: served by `streamscope serve`
// (browser mode) and loaded by the Electron window. Relative asset paths so
// both the HTTP server and the app:// protocol can serve it.
import path from 'node:path';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

export default defineConfig({
  root: path.resolve(import.meta.dirname),
  base: './',
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: false, target: 'es2022' },
});
