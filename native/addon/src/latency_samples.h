// latencySamples: the host model's samples of the GPU's own latencies, one
// pass over every op (latency_samples.cc; profiler/analysis/replay/replay-host.ts
// measureLatencies takes their medians).
#pragma once

#include <napi.h>

namespace streamscope::addon {

Napi::Value latencySamplesBinding(const Napi::CallbackInfo& info);

}  // namespace streamscope::addon
