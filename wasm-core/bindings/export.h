/*
 * export.h - what the browser bridge may call.  Every function the bridge
 * uses is marked SL_EXPORT and documented in web/core/bridge-protocol.ts;
 * binary results are written into caller-provided buffers whose layout is
 * described there too.  Each model adds its own bindings/api_<model>.c.
 */
#ifndef SL_EXPORT_H
#define SL_EXPORT_H

#include <emscripten.h>

#define SL_EXPORT EMSCRIPTEN_KEEPALIVE

#endif
