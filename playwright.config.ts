// playwright.config.ts - end-to-end tests in the system's headless Chromium.
//
// Two servers over the same built site (dist/, from `vite build`):
//   isolated: `vite preview`, which sends COOP/COEP, so the page gets the
//             threads build;
//   plain:    python3 -m http.server, no isolation headers, as a static host
//             or a docs page would serve it: the single-threaded build.
// scripts/test.mjs builds dist/ first and picks free ports (E2E_ISOLATED_PORT,
// E2E_PLAIN_PORT); the defaults serve a manual `npx playwright test`.
import { defineConfig } from '@playwright/test';

import { ISOLATED_URL, PLAIN_URL, isolatedPort, plainPort } from './e2e/servers';

export default defineConfig({
  testDir: 'e2e',
  fullyParallel: false,
  workers: 1,
  forbidOnly: true,
  retries: 0,
  timeout: 60_000,
  reporter: [['list']],
  use: {
    browserName: 'chromium',
    launchOptions: {
      executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    },
  },
  webServer: [
    {
      command: `npx vite preview --port ${isolatedPort} --strictPort`,
      url: ISOLATED_URL,
      reuseExistingServer: false,
      timeout: 60_000,
    },
    {
      command: `python3 -m http.server ${plainPort} --bind 127.0.0.1 -d dist`,
      url: PLAIN_URL,
      stderr: 'ignore', // its access log
      reuseExistingServer: false,
      timeout: 60_000,
    },
  ],
});
