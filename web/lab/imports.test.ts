// The engine (web/lab/) and the core (web/core/) never import a view folder,
// not even through another module: views plug in through the lists
// web/views.ts and web/models.ts, which only the entry points import.  So a
// view can be added or removed without touching either, and the engine
// cannot grow a dependency on one model.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const WEB = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** Folders of views, and the two lists that import them. */
const VIEW_FOLDERS = ['slub', 'percpu', 'slab', 'trace', 'selftest'];
const REGISTRIES = ['views.ts', 'models.ts'];

const SPECIFIER = /(?:^|[\s;])(?:import|export)\s[^'"`;]*?from\s*['"]([^'"]+)['"]|(?:^|[\s;(=])import\s*\(\s*['"]([^'"]+)['"]\s*\)|(?:^|[\s;])import\s*['"]([^'"]+)['"]/g;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'generated' ? [] : sources(path);
    return /\.tsx?$/.test(name) ? [path] : [];
  });
}

/** The file a relative specifier names (TypeScript's resolution for .ts, .tsx, index files), or null for a package. */
function resolveImport(from: string, spec: string): string | null {
  if (!spec.startsWith('.')) return null;
  const base = resolve(dirname(from), spec);
  for (const candidate of [base, `${base}.ts`, `${base}.tsx`, join(base, 'index.ts'), join(base, 'index.tsx')])
    if (/\.tsx?$/.test(candidate) && existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  return base; // a stylesheet, the generated glue: not source to follow, but still a place
}

/** The view folders or lists `file` reaches through its imports, with one import chain for each. */
function viewsReached(file: string): Map<string, string[]> {
  const found = new Map<string, string[]>();
  const seen = new Set<string>();
  const walk = (f: string, chain: string[]) => {
    if (seen.has(f)) return;
    seen.add(f);
    const rel = relative(WEB, f);
    const top = rel.split('/')[0] ?? '';
    if (chain.length && (VIEW_FOLDERS.includes(top) || REGISTRIES.includes(rel))) {
      if (!found.has(top)) found.set(top, [...chain, rel]);
      return;
    }
    if (!/\.tsx?$/.test(f)) return;
    for (const m of readFileSync(f, 'utf8').matchAll(SPECIFIER)) {
      const next = resolveImport(f, m[1] ?? m[2] ?? m[3] ?? '');
      if (next) walk(next, [...chain, rel]);
    }
  };
  walk(file, []);
  return found;
}

describe('imports', () => {
  it('finds a view reached through other modules (the worker entry reaches SLUB through the models list)', () => {
    const reached = viewsReached(join(WEB, 'bridge.worker.ts'));
    expect(reached.get('models.ts')).toEqual(['bridge.worker.ts', 'models.ts']);
    expect(viewsReached(join(WEB, 'models.ts')).get('slub')).toEqual(['models.ts', 'slub/worker.ts']);
  });

  for (const layer of ['lab', 'core'])
    it(`web/${layer}/ reaches no view folder and neither list, directly or not`, () => {
      const files = sources(join(WEB, layer));
      expect(files.length).toBeGreaterThan(5);
      const bad = files.flatMap((f) => [...viewsReached(f).values()].map((chain) => chain.join(' -> ')));
      expect(bad).toEqual([]);
    });
});
