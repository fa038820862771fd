// denseIndices: each op's dense device, stream and context, the dense
// indexes the replay's host model reads (dense_indices.cc;
// profiler/analysis/replay/replay-host.ts denseIndices).
#pragma once

#include <napi.h>

namespace streamscope::addon {

Napi::Value denseIndicesBinding(const Napi::CallbackInfo& info);

}  // namespace streamscope::addon
