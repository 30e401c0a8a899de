// vite.config.ts - the lab (index.html) and the embeddable view (embed.html).
//
// Both the dev server (`npm start`) and `vite preview` send the headers that
// make the page cross-origin isolated (COOP same-origin + COEP require-corp),
// which gives the bridge worker SharedArrayBuffer and so the threads build of
// the core.  CORP cross-origin lets an isolated page on another site embed
// embed.html.  A static host without these headers still works: the worker
// then loads the single-threaded build.
import react from '@vitejs/plugin-react';
import { resolve } from 'node:path';
import { defineConfig } from 'vite';

const isolationHeaders = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
  'Cross-Origin-Resource-Policy': 'cross-origin',
};

export default defineConfig({
  plugins: [react()],
  base: './',
  server: {
    host: 'localhost',
    port: 5173,
    strictPort: true,
    headers: isolationHeaders,
    watch: { ignored: ['**/wasm-core/**', '**/test-results/**', '**/dist/**'] },
  },
  preview: {
    host: 'localhost',
    port: 4173,
    strictPort: true,
    headers: isolationHeaders,
  },
  worker: { format: 'es' },
  build: {
    outDir: 'dist',
    target: 'es2022',
    rollupOptions: {
      input: {
        main: resolve(import.meta.dirname, 'index.html'),
        embed: resolve(import.meta.dirname, 'embed.html'),
      },
    },
  },
});
