// vite.config.ts - the lab (index.html) and the embeddable view (embed.html).
//
// Both the dev server (`npm start`) and `vite preview` send the headers that
// make the page cross-origin isolated (COOP same-origin + COEP require-corp),
// which gives the bridge worker SharedArrayBuffer and so the threads build of
// the core.  CORP cross-origin lets an isolated page on another site embed
// embed.html.  A static host without these headers still works: the worker
// then loads the single-threaded build.
//
// The SLAB view's caches panel offers two files of tests/fixtures/slab/ as
// they are: this project's machine's /sys/kernel/slab (a directory, served as
// a tar of it) and a SLAB kernel's /proc/slabinfo; the dev server answers
// them and the build writes them beside the pages.
import react from '@vitejs/plugin-react';
import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { defineConfig, type Plugin } from 'vite';
import { SYSFS_FILES, writeTar } from './web/slab/tar';

const fixtures = resolve(import.meta.dirname, 'tests/fixtures/slab');

/** A tar of a /sys/kernel/slab-like folder: each cache directory with the files slab-types reads. */
function sysfsTar(dir: string): Uint8Array {
  const entries: { path: string; data?: Uint8Array }[] = [{ path: 'slab' }];
  for (const cache of readdirSync(dir).sort()) {
    entries.push({ path: `slab/${cache}` });
    const present = new Set(readdirSync(resolve(dir, cache)));
    for (const f of SYSFS_FILES) if (present.has(f)) entries.push({ path: `slab/${cache}/${f}`, data: readFileSync(resolve(dir, cache, f)) });
  }
  return writeTar(entries);
}

/** The files the caches panel takes (web/slab/CachesPanel.tsx's BUNDLED), by their path on the site. */
const SLAB_FIXTURES: Record<string, () => Uint8Array> = {
  'fixtures/slab/sysfs-6.18.tar': () => sysfsTar(resolve(fixtures, 'sysfs-6.18')),
  'fixtures/slab/slabinfo-5.4.54-slab.txt': () => readFileSync(resolve(fixtures, 'slabinfo-5.4.54-slab.txt')),
};

function slabFixtures(): Plugin {
  return {
    name: 'slablab-slab-fixtures',
    configureServer(server) {
      server.middlewares.use((req, res, next) => {
        const file = SLAB_FIXTURES[(req.url ?? '').replace(/^\//, '').split('?')[0] ?? ''];
        if (!file) return next();
        res.setHeader('Content-Type', 'application/octet-stream');
        res.end(file());
      });
    },
    generateBundle() {
      for (const [fileName, file] of Object.entries(SLAB_FIXTURES)) this.emitFile({ type: 'asset', fileName, source: file() });
    },
  };
}

const isolationHeaders = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
  'Cross-Origin-Resource-Policy': 'cross-origin',
};

export default defineConfig({
  plugins: [react(), slabFixtures()],
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
