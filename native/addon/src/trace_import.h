// `importKinetoTrace(file, options)`: a PyTorch profiler (Kineto) Chrome-trace
// JSON file → the rows of a recording, natively (profiler/import/kineto.ts
// calls it; that file keeps what comes after the rows: device facts from
// deviceProperties, the command, meta, zones and indexes).
#pragma once

#include <napi.h>

namespace streamscope::addon {

void initTraceImport(Napi::Env env, Napi::Object exports);

}  // namespace streamscope::addon
