// serve_child.mjs - starting `slablab serve` for the CLI tests (live_cli_test.mjs,
// release_cli_test.mjs): one copy of the start-up handshake.
import { spawn } from 'node:child_process';

/**
 * Spawns `bin serve ARGS` (in cwd if given), remembers the child in `children`
 * (the caller kills what is left), and resolves once serve printed its URL with
 * { child, port, token, base, banner, stderr() }; rejects if it exits first or
 * prints no URL in 10 s.
 */
export function startServe(bin, args, children, cwd = undefined) {
  const child = spawn(bin, ['serve', ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve printed no URL in 10 s: ${err}`)), 10000);
    child.stdout.on('data', (d) => {
      out += d;
      const m = /http:\/\/127\.0\.0\.1:(\d+)\/\?mode=live&token=([0-9a-f]+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        const port = Number(m[1]);
        resolve({ child, port, token: m[2], base: `http://127.0.0.1:${port}`, banner: out, stderr: () => err });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code}: ${err}`));
    });
  });
}
