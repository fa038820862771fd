// `importKinetoTrace(file, options)`: a PyTorch profiler (Kineto) Chrome-trace
// JSON file → the rows of a recording, natively (profiler/import/kineto.ts
// calls it; that file keeps what comes after the rows: device facts from
// deviceProperties, the command, meta, zones and indexes).
#pragma once

#include <napi.h>

namespace streamscope::addon {

// importKinetoTrace(file, { output, copyKinds, memoryKinds, hostRanges, cpuOps, parse, maxEventBytes }): the rows, and
// what profiler/import/kineto.ts needs of the trace besides them. A problem with the trace is a JS Error with code
// 'TRACE_FORMAT', `problem` and `at`; a failed write of the output a SqliteError (its code in the JS Error).
Napi::Value importKinetoTrace(const Napi::CallbackInfo& info);
// scanTraceEvents(file, { parse, onEvents, maxEventBytes }): the same scan for profiler/import/chrome.ts, which maps
// the events itself; returns the top-level members.
Napi::Value scanTraceEvents(const Napi::CallbackInfo& info);

}  // namespace streamscope::addon
