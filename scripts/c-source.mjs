// c-source.mjs - the models' own C, read at build time for the lab's code
// panel (web/lab/CodePanel.tsx): for each model folder wasm-core/src/<id>/
// (one with an events.def: slub, slab, percpu, ...), the functions that
// hold a preemption point or emit one of the model's events, with their
// text, and where each point and event is.  vite.config.ts serves the result
// as the module virtual:slablab/c-source, generated from the sources on
// every build, so the panel cannot drift from the code it shows.
//
// The C is kernel style, which the reader relies on: a function's body
// opens with a `{` alone on a line and closes with a `}` alone on a line;
// its signature is the lines above, back to a blank line, a comment or the
// end of the previous definition.  Sites:
//   - a preemption point is a line holding SL_PREEMPT_POINT(..., SL_<M>_PP_<NAME>, ...);
//     its id is NAME's value in the model's headers.  The PREEMPT_POINT event
//     the scheduler records carries the line (arg2), which picks the site
//     when one id sits at several places;
//   - an event site is a line naming one of the model's own event kinds
//     (events.def) as SL_EV_<KIND>, or as the bare kind in a call of an
//     emitting macro (SLUB's SLI_EV(a, KIND, ...), percpu's SLI_PCPU_EVENT).
// A function's kernel name is the one its leading comment marks
// ("kernel: ___slab_alloc", or "kernel: none" for the model's own), else
// the identifier the comment starts with ("slab_alloc_node: the fast
// path..."), else its own name without the model's prefix
// (sli_slub_deactivate_slab -> deactivate_slab, sli_free_to_pcs ->
// free_to_pcs) if that is still a compound name; otherwise none (the panel
// links the kernel file).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseEventDefs } from './gen-events.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const SRC = join(ROOT, 'wasm-core/src');

/** The model folders: those with their own events.def (trace/ holds the shared one). */
export function modelDirs(src = SRC) {
  return readdirSync(src, { withFileTypes: true })
    .filter((d) => d.isDirectory() && d.name !== 'trace' && existsSync(join(src, d.name, 'events.def')))
    .map((d) => d.name)
    .sort();
}

/** The files of a model folder with `ext`, sorted. */
const filesOf = (dir, ext) => readdirSync(dir).filter((f) => f.endsWith(ext)).sort();

/** Preemption point ids: `SL_<M>_PP_<NAME> = n` in the model's headers. */
function pointIds(dir) {
  const ids = new Map();
  for (const f of filesOf(dir, '.h'))
    for (const m of readFileSync(join(dir, f), 'utf8').matchAll(/\b(SL_[A-Z0-9]+_PP_[A-Z0-9_]+)\s*=\s*(\d+)/g)) ids.set(m[1], Number(m[2]));
  return ids;
}

/** The leading comment's text (the block ending on the line above `at`), or ''. */
function leadingComment(lines, at) {
  let end = at - 1;
  if (end < 0 || !lines[end].trimEnd().endsWith('*/')) return '';
  let start = end;
  while (start > 0 && !lines[start].trimStart().startsWith('/*')) start--;
  return lines
    .slice(start, end + 1)
    .map((l) => l.replace(/^\s*\/\*+\s?|\s*\*+\/\s*$|^\s*\*\s?/g, ''))
    .join(' ')
    .trim();
}

/** The kernel function a model function stands for (see the file's header), or null when neither names one. */
export function kernelName(name, comment) {
  const marked = /\bkernel: (none\b|_*[a-z][a-z0-9_]*)/.exec(comment);
  if (marked) return marked[1] === 'none' ? null : marked[1];
  const named = /^(_*[a-z][a-z0-9]*(?:_[a-z0-9]+)+)(?=$|[\s:(',])/.exec(comment);
  if (named) return named[1];
  const own = name.replace(/^sli?_(?:(?:slub|slab|pcpu|percpu)_)?/, '');
  return own.includes('_') ? own : null;
}

/** The function definitions of one C file: name, first and last line (1-based), leading comment. */
export function functionsOf(text) {
  const lines = text.split('\n');
  const out = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== '{') continue;
    let j = i - 1;
    while (j > 0 && /^[A-Za-z_]|^\s+\S/.test(lines[j - 1]) && !/[;}]\s*$|\*\/\s*$|^#/.test(lines[j - 1])) j--;
    const signature = lines.slice(j, i).join(' ');
    const name = /([A-Za-z_]\w*)\s*\(/.exec(signature)?.[1];
    let k = i + 1;
    while (k < lines.length && lines[k] !== '}') k++;
    if (!name || k >= lines.length || /=\s*$/.test(signature)) continue;
    out.push({ name, first: j + 1, last: k + 1, comment: leadingComment(lines, j) });
    i = k;
  }
  return out;
}

/** One model's functions (those with a site) and its sites. */
export function readModel(id, src = SRC) {
  const dir = join(src, id);
  const ids = pointIds(dir);
  const kinds = parseEventDefs(join(src, id, 'events.def')).filter((k) => k.area === id);
  const kindByName = new Map(kinds.map((k) => [k.name, k.num]));
  const bareKind = kinds.length ? new RegExp(`\\b(${kinds.map((k) => k.name).join('|')})\\b`) : null;
  const functions = [];
  const points = {};
  const events = {};
  const pointNames = Object.fromEntries([...ids].map(([name, num]) => [num, name]));
  for (const file of filesOf(dir, '.c')) {
    const text = readFileSync(join(dir, file), 'utf8');
    const lines = text.split('\n');
    for (const f of functionsOf(text)) {
      const sites = [];
      for (let n = f.first; n <= f.last; n++) {
        const line = lines[n - 1];
        if (line.includes('SL_PREEMPT_POINT(')) {
          const pp = /\b(SL_[A-Z0-9]+_PP_[A-Z0-9_]+)\b/.exec(line)?.[1];
          const num = pp === undefined ? undefined : ids.get(pp);
          if (num === undefined) throw new Error(`${relative(ROOT, join(dir, file))}:${n}: a preemption point whose id is not one of ${[...ids.keys()].join(', ')}`);
          sites.push(['point', num, n]);
        }
        for (const m of line.matchAll(/\bSL_EV_([A-Z0-9_]+)\b/g)) if (kindByName.has(m[1])) sites.push(['event', kindByName.get(m[1]), n]);
        const b = /\b\w*(?:EV|EVENT)\s*\(/.test(line) ? bareKind?.exec(line) : null;
        if (b) sites.push(['event', kindByName.get(b[1]), n]);
      }
      if (!sites.length) continue;
      const index = functions.length;
      functions.push({ name: f.name, kernel: kernelName(f.name, f.comment), file: `wasm-core/src/${id}/${file}`, first: f.first, lines: lines.slice(f.first - 1, f.last) });
      for (const [what, num, line] of sites) {
        const table = what === 'point' ? points : events;
        (table[num] ??= []).push({ fn: index, line });
      }
    }
  }
  return { functions, points, pointNames, events };
}

/** Every model's source map, keyed by model id (= view id). */
export function readCSource(src = SRC) {
  return { models: Object.fromEntries(modelDirs(src).map((id) => [id, readModel(id, src)])) };
}
