// The engine (web/lab/) and the core (web/core/) never import a view folder,
// not even through another module: views plug in through the lists
// web/views.ts and web/models.ts, which only the entry points import.  So a
// view can be added or removed without touching either, and the engine
// cannot grow a dependency on one model.
//
// A view (or the shell's pages) that uses another view's modules declares
// them: its index.ts exports `USES` (web/lab/view.ts ViewUses), and every
// import of another view's module from its code must be listed there, and
// every module listed imported.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const WEB = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const REGISTRIES = ['views.ts', 'models.ts'];
/** Folders of views: the folders the two lists import. */
const VIEW_FOLDERS = [
  ...new Set(REGISTRIES.flatMap((r) => [...readFileSync(join(WEB, r), 'utf8').matchAll(/from\s*['"]\.\/([\w-]+)(?:\/[^'"]*)?['"]/g)].map((m) => m[1] ?? ''))),
].filter((f) => f && existsSync(join(WEB, f, 'index.ts')));
/** Folders that declare what they use of the views: each view, and the shell's pages. */
const DECLARING = [...VIEW_FOLDERS, 'pages'];

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

/** A folder's declared USES (its index.ts), read from the source: view -> modules. */
function declaredUses(folder: string): Record<string, string[]> {
  const text = readFileSync(join(WEB, folder, 'index.ts'), 'utf8');
  const m = text.match(/export const USES: ViewUses = (\{[^;]*\});/);
  if (!m?.[1]) throw new Error(`web/${folder}/index.ts declares no \`export const USES: ViewUses = {...};\``);
  return JSON.parse(m[1].replace(/'/g, '"').replace(/([{,]\s*)([\w-]+)\s*:/g, '$1"$2":').replace(/,(\s*[}\]])/g, '$1')) as Record<string, string[]>;
}

/** The other views' modules the code of `folder` imports directly (tests and benchmarks left out): view -> module -> an importing file. */
function usedModules(folder: string): Map<string, Map<string, string>> {
  const used = new Map<string, Map<string, string>>();
  for (const f of sources(join(WEB, folder))) {
    if (/\.(test|bench)\.tsx?$/.test(f)) continue;
    for (const m of readFileSync(f, 'utf8').matchAll(SPECIFIER)) {
      const target = resolveImport(f, m[1] ?? m[2] ?? m[3] ?? '');
      if (!target) continue;
      const [top = '', ...rest] = relative(WEB, target).split('/');
      if (top === folder || !VIEW_FOLDERS.includes(top) || !rest.length) continue;
      const mod = rest.join('/').replace(/\.tsx?$/, '');
      if (!used.has(top)) used.set(top, new Map());
      used.get(top)?.set(mod, relative(WEB, f));
    }
  }
  return used;
}

describe('declared view-to-view imports', () => {
  it('finds the views in the lists, and the trace view using SLUB\'s drawing', () => {
    expect(VIEW_FOLDERS).toEqual(expect.arrayContaining(['slub', 'slab', 'percpu', 'trace', 'selftest']));
    expect(usedModules('trace').get('slub')?.has('render')).toBe(true);
  });

  for (const folder of DECLARING)
    it(`web/${folder}/ imports only the other views' modules its index.ts declares, and uses each it declares`, () => {
      const declared = declaredUses(folder);
      const used = usedModules(folder);
      const undeclared = [...used].flatMap(([view, mods]) => [...mods].filter(([mod]) => !declared[view]?.includes(mod)).map(([mod, file]) => `${file} imports ${view}/${mod}`));
      const unused = Object.entries(declared).flatMap(([view, mods]) => mods.filter((mod) => !used.get(view)?.has(mod)).map((mod) => `${view}/${mod}`));
      const notViews = Object.keys(declared).filter((v) => !VIEW_FOLDERS.includes(v) || v === folder);
      expect({ undeclared, unused, notViews }).toEqual({ undeclared: [], unused: [], notViews: [] });
    });
});

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
