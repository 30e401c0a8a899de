// vite.config.ts - the lab (index.html), the embeddable view (embed.html)
// and the <slab-lab> element (dist/slab-lab.js, an ES module entry with a
// fixed name, so a page can load it by that name; its chunks, the bridge
// worker and the WebAssembly go to assets/ beside it and are found relative
// to the script's URL).  In development /slab-lab.js redirects to the
// element's source, so pages load it by the same name under `npm start`.
//
// virtual:slablab/c-source is the models' C as the code panel shows it,
// read from wasm-core/src on every build (scripts/c-source.mjs).
//
// coi-serviceworker.js (from the npm package) is served and built beside
// them: a page on a host that cannot send COOP/COEP loads it first and gets
// cross-origin isolation, hence the threads build, from a service worker
// (public/docs.html does so when asked with ?threads).
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
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { defineConfig, type Plugin } from 'vite';
import { readCSource } from './scripts/c-source.mjs';
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

/** /slab-lab.js under the dev server: the element's module. */
const slabLabInDev: Plugin = {
  name: 'slab-lab-in-dev',
  configureServer(server) {
    server.middlewares.use((req, res, next) => {
      if (req.url?.split('?')[0] !== '/slab-lab.js') return next();
      res.statusCode = 302;
      res.setHeader('Location', '/web/embed/slab-lab.ts');
      res.end();
    });
  },
};

const COI_SERVICEWORKER = createRequire(import.meta.url).resolve('coi-serviceworker/coi-serviceworker.min.js');

/** /coi-serviceworker.js, served and emitted from the npm package as it is. */
const coiServiceWorker: Plugin = {
  name: 'coi-serviceworker',
  configureServer(server) {
    server.middlewares.use('/coi-serviceworker.js', (_req, res) => {
      res.setHeader('Content-Type', 'text/javascript');
      res.end(readFileSync(COI_SERVICEWORKER));
    });
  },
  generateBundle() {
    this.emitFile({ type: 'asset', fileName: 'coi-serviceworker.js', source: readFileSync(COI_SERVICEWORKER, 'utf8') });
  },
};

const C_SOURCE = 'virtual:slablab/c-source';

/** The models' functions, preemption points and event sites, for the code panel (web/lab/code.ts). */
const cSource: Plugin = {
  name: 'c-source',
  resolveId: (id) => (id === C_SOURCE ? `\0${C_SOURCE}` : null),
  load: (id) => {
    if (id !== `\0${C_SOURCE}`) return null;
    return `export default ${JSON.stringify(readCSource())};`;
  },
};

export default defineConfig({
  plugins: [react(), slabFixtures(), slabLabInDev, coiServiceWorker, cSource],
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
        'slab-lab': resolve(import.meta.dirname, 'web/embed/slab-lab.ts'),
      },
      output: {
        entryFileNames: (chunk) => (chunk.name === 'slab-lab' ? 'slab-lab.js' : 'assets/[name]-[hash].js'),
      },
    },
  },
});
