// opResources: what each operation needs to run in the what-if replay, its
// copy engine or its share of the SMs (op_resources.cc;
// profiler/analysis/replay/replay-resources.ts says the model).
#pragma once

#include <napi.h>

namespace streamscope::addon {

Napi::Value opResourcesBinding(const Napi::CallbackInfo& info);

}  // namespace streamscope::addon
