// The Emscripten glue modules (build output in web/core/generated/): their
// default export is the factory; load-core.ts gives it its real type.
declare module '*/generated/slablab-threads.mjs' {
  const createSlablabCore: unknown;
  export default createSlablabCore;
}
declare module '*/generated/slablab-single.mjs' {
  const createSlablabCore: unknown;
  export default createSlablabCore;
}
declare module '*/generated/slablab-bench.mjs' {
  const createSlablabCore: unknown;
  export default createSlablabCore;
}
