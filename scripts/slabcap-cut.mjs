#!/usr/bin/env node
// slabcap-cut.mjs - a real .slabcap cut down to some caches, for test fixtures:
//   node scripts/slabcap-cut.mjs IN.slabcap OUT.slabcap.gz --cache filp[,NAME...]
// Keeps slabcap.meta and slabcap-end.meta as they are, the chosen caches' sysfs folders,
// the trace's header lines and the chosen caches' kmem_cache_alloc / kmem_cache_free lines
// (every line with `name=NAME`), and of each snapshot member only the chosen caches (the
// rest of the document as it is); drops proc/slabinfo, percpu_stats and every other line.
// Everything kept is byte for byte what the capture recorded.  The result is gzip'd.
import { readFileSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';

const [input, output, flag, names] = process.argv.slice(2);
if (!input || !output || flag !== '--cache' || !names) {
  console.error('usage: node scripts/slabcap-cut.mjs IN.slabcap OUT.slabcap.gz --cache NAME[,NAME...]');
  process.exit(2);
}
const keep = new Set(names.split(','));
const tar = readFileSync(input);
const members = [];
for (let at = 0; at + 512 <= tar.length; ) {
  const h = tar.subarray(at, at + 512);
  if (h.every((b) => b === 0)) break;
  const str = (o, n) => h.subarray(o, o + n).toString('latin1').replace(/\0.*$/s, '');
  const prefix = str(345, 155);
  const name = (prefix ? `${prefix}/` : '') + str(0, 100);
  const size = parseInt(str(124, 12).trim() || '0', 8);
  const type = String.fromCharCode(h[156] || 48);
  members.push({ name, type, link: str(157, 100), data: tar.subarray(at + 512, at + 512 + size) });
  at += 512 + Math.ceil(size / 512) * 512;
}

function header(name, type, size, link) {
  const h = Buffer.alloc(512);
  let base = name;
  let prefix = '';
  if (Buffer.byteLength(name) > 100) {
    const cut = name.lastIndexOf('/', 155);
    prefix = name.slice(0, cut);
    base = name.slice(cut + 1);
  }
  h.write(base, 0, 100, 'latin1');
  h.write(type === '2' ? '0000777\0' : '0000644\0', 100, 'latin1');
  h.write('0000000\0', 108, 'latin1');
  h.write('0000000\0', 116, 'latin1');
  h.write(`${size.toString(8).padStart(11, '0')}\0`, 124, 'latin1');
  h.write(`${Math.floor(Date.UTC(2026, 0, 1) / 1000).toString(8).padStart(11, '0')}\0`, 136, 'latin1');
  h.write('        ', 148, 'latin1');
  h.write(type, 156, 'latin1');
  if (link) h.write(link, 157, 100, 'latin1');
  h.write('ustar\0' + '00', 257, 'latin1');
  h.write(prefix, 345, 155, 'latin1');
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
  return h;
}

const out = [];
const add = (name, type, data, link = '') => {
  out.push(header(name, type, data.length, link), data, Buffer.alloc((512 - (data.length % 512)) % 512));
};
const kept = { lines: 0, dropped: 0 };
for (const m of members) {
  if (m.name === 'slabcap.meta' || m.name === 'slabcap-end.meta') add(m.name, m.type, m.data);
  else if (m.name.startsWith('sys/kernel/slab/')) {
    const folder = m.name.slice(16).split('/')[0];
    if (keep.has(folder)) add(m.name, m.type, m.data, m.link);
  } else if (m.name === 'trace.txt') {
    const lines = m.data.toString('latin1').split('\n');
    const chosen = lines.filter((l) => {
      const ok = l.startsWith('#') || [...keep].some((n) => l.includes(` name=${n} `) || l.endsWith(` name=${n}`));
      if (ok) kept.lines++;
      else kept.dropped++;
      return ok;
    });
    add(m.name, m.type, Buffer.from(chosen.join('\n') + '\n', 'latin1'));
  } else if (m.name.startsWith('snapshot-') && m.name.endsWith('.json')) {
    const doc = JSON.parse(m.data.toString('utf8'));
    doc.caches = doc.caches.filter((c) => keep.has(c.name));
    add(m.name, m.type, Buffer.from(JSON.stringify(doc)));
  }
}
out.push(Buffer.alloc(1024));
writeFileSync(output, gzipSync(Buffer.concat(out), { level: 9 }));
console.log(`${output}: ${kept.lines} trace lines kept, ${kept.dropped} dropped`);
