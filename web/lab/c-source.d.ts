// The module vite.config.ts generates from the models' C (scripts/c-source.mjs).
declare module 'virtual:slablab/c-source' {
  const source: import('./code').CSource;
  export default source;
}
