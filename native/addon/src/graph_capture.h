// captureGraphs: the CUDA-graph fix's runs of kernel launches and what the
// replay changes for them (graph_capture.cc; profiler/analysis/replay/whatif.ts
// captureGraphs says what the fix models).
#pragma once

#include <napi.h>

namespace streamscope::addon {

Napi::Value captureGraphsBinding(const Napi::CallbackInfo& info);

}  // namespace streamscope::addon
