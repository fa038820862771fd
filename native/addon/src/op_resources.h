// opResources: what each op must hold to run in the what-if replay, its
// copy engine and its share of the SMs (op_resources.cc;
// profiler/analysis/replay/replay-resources.ts holds the model).
#pragma once

#include <napi.h>

namespace streamscope::addon {

Napi::Value opResourcesBinding(const Napi::CallbackInfo& info);

}  // namespace streamscope::addon
