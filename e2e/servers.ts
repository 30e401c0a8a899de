// Where playwright.config.ts serves the built site (see there).
export const isolatedPort = Number(process.env.E2E_ISOLATED_PORT ?? 4173);
export const plainPort = Number(process.env.E2E_PLAIN_PORT ?? 4180);
/** vite preview: COOP/COEP sent, the page is cross-origin isolated. */
export const ISOLATED_URL = `http://localhost:${isolatedPort}/`;
/** python3 -m http.server: no isolation headers. */
export const PLAIN_URL = `http://127.0.0.1:${plainPort}/`;
