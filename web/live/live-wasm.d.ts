// The live counting's standalone WebAssembly (wasm-core/CMakeLists.txt's slablab-live, build
// output in web/core/generated/): its bytes as base64, instantiated by live-state.ts.
declare module '*/generated/slablab-live-wasm.mjs' {
  const base64: string;
  export default base64;
}
