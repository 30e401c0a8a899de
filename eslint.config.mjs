// eslint.config.mjs - ESLint (flat config) over the web code, its tests and
// the scripts: @eslint/js's recommended rules, typescript-eslint's, and the
// React hooks rules.  `node scripts/test.mjs lint` runs it.
//
// The project compiles with TypeScript 7 (the native compiler), which has no
// JavaScript API; typescript-eslint parses with TypeScript's 6.0 API, so
// package.json carries it as `typescript-for-eslint` (an npm alias) and the
// hook below hands it to typescript-eslint's modules when they ask for
// `typescript` (.npmrc's legacy-peer-deps lets the two versions live side by
// side).  Only the linter's parse uses it; `tsc` stays the type checker.
import Module, { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const typescript6 = require.resolve('typescript-for-eslint');
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, parent, ...rest) {
  if (request === 'typescript' && /[\\/]node_modules[\\/](@typescript-eslint|typescript-eslint|ts-api-utils)[\\/]/.test(parent?.filename ?? '')) return typescript6;
  return resolve.call(this, request, parent, ...rest);
};

const { default: js } = await import('@eslint/js');
const { default: tseslint } = await import('typescript-eslint');
const { default: reactHooks } = await import('eslint-plugin-react-hooks');
const { default: globals } = await import('globals');

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'wasm-core/**', 'web/core/generated/**', 'public/**', 'test-results/**', 'playwright-report/**', '**/*.generated.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['web/**/*.{ts,tsx}'],
    languageOptions: { globals: { ...globals.browser } },
    plugins: { 'react-hooks': reactHooks },
    // The two rules of hooks. The plugin's React Compiler rules (refs, set-state-in-effect, immutability, ...) are
    // for code the compiler builds; this project does not use it, and they are not enabled.
    rules: {
      'react-hooks/rules-of-hooks': 'error',
      'react-hooks/exhaustive-deps': 'error',
    },
  },
  {
    files: ['**/*.{ts,tsx,mjs,js}'],
    rules: {
      // `_name` marks a value left out on purpose (a destructured field dropped, an unused parameter of a callback's signature).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    files: ['scripts/**/*.{mjs,js}', 'e2e/**/*.ts', '*.config.{ts,mjs}', 'tests/**/*.{mjs,js,ts}'],
    languageOptions: { globals: { ...globals.node } },
  },
  {
    // Browser benchmarks and budgets: functions handed to Playwright's page.evaluate run in the page.
    files: ['scripts/*-bench.mjs', 'scripts/embed-budget.mjs', 'scripts/lab-shell-measure.mjs'],
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
  },
);
