#!/usr/bin/env node
// build-release.mjs - the one-file `slablab`: the CLI with the built lab (dist/) inside it and
// every library linked statically, glibc included, so that the machine under study needs
// nothing else (docs/live.md, "Deploying").  Run after `npx vite build` (`npm run build:release`
// does both):
//
//   node scripts/build-release.mjs [--site DIR]     writes wasm-core/build/release/slablab
//
// The site is packed here (the layout in wasm-core/cli/live_site.h: "SLSITE1\0", its inflated
// size, then a zlib stream of path/data entries), with the same rules as `serve --site DIR`
// reads a directory (regular files only, no symbolic links, no hidden names); the pack is
// rewritten only when its bytes change, so ninja relinks only then.  CMake includes it with
// an assembler .incbin (SLABLAB_SITE_PACK) and links with -static (SLABLAB_STATIC).
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deflateSync } from 'node:zlib';
import { cmakeBuild, core, installPackages, root } from './setup.mjs';

/** Every served file under dir as [path with a leading slash, bytes], sorted by path. */
export function siteFiles(dir, rel = '') {
  const out = [];
  for (const name of readdirSync(join(dir, rel)).sort()) {
    if (name.startsWith('.')) continue;
    const st = lstatSync(join(dir, rel, name));
    if (st.isDirectory()) out.push(...siteFiles(dir, `${rel}/${name}`));
    else if (st.isFile()) out.push([`${rel}/${name}`, readFileSync(join(dir, rel, name))]);
  }
  return out;
}

/** The pack of a site directory (live_site.h's layout). */
export function packSite(dir) {
  const parts = [];
  for (const [path, data] of siteFiles(dir)) {
    const p = Buffer.from(`${path}\0`, 'utf8');
    const hdr = Buffer.alloc(8);
    hdr.writeUInt32LE(p.length, 0);
    hdr.writeUInt32LE(data.length, 4);
    parts.push(hdr, p, data);
  }
  const raw = Buffer.concat(parts);
  const head = Buffer.alloc(16);
  head.write('SLSITE1\0', 0, 'latin1');
  head.writeBigUInt64LE(BigInt(raw.length), 8);
  return Buffer.concat([head, deflateSync(raw, { level: 9 })]);
}

/** Builds the release binary from the site in `site`; returns its path. */
export function buildRelease(site = join(root, 'dist')) {
  if (!existsSync(join(site, 'index.html'))) throw new Error(`${site} has no index.html: run \`npx vite build\` first`);
  installPackages('bench'); // libbpf, bpftool, clang, libmicrohttpd: `serve` is the point of this binary
  const dir = join(core, 'build', 'release');
  mkdirSync(dir, { recursive: true });
  const packPath = join(dir, 'site.pack');
  const pack = packSite(site);
  if (!existsSync(packPath) || !readFileSync(packPath).equals(pack)) writeFileSync(packPath, pack);
  cmakeBuild('release', { defs: ['CMAKE_BUILD_TYPE=Release', `SLABLAB_SITE_PACK=${packPath}`, 'SLABLAB_STATIC=ON'], targets: ['slablab'] });
  const bin = join(dir, 'slablab');
  const cache = readFileSync(join(dir, 'CMakeCache.txt'), 'utf8');
  if (!existsSync(join(dir, 'bpf', 'slab_events.skel.h')) || !/^MHD_FOUND:INTERNAL=1$/m.test(cache))
    throw new Error(`${dir} was configured without BPF or libmicrohttpd: remove it and run this again`);
  const fileInfo = spawnSync('file', ['-b', bin], { encoding: 'utf8' }).stdout?.trim() ?? '';
  console.error(`build-release: ${bin} (${(statSync(bin).size / 1048576).toFixed(1)} MiB; the site ${(pack.length / 1048576).toFixed(1)} MiB packed${fileInfo ? `; ${fileInfo.split(',').slice(0, 4).join(',')}` : ''})`);
  return bin;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const i = process.argv.indexOf('--site');
  try {
    console.log(buildRelease(i > 0 ? process.argv[i + 1] : undefined));
  } catch (e) {
    console.error(`build-release: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  }
}
