// indexCalls: the host calls' indexes of a recording's loaded columns (call_index.cc; profiler/analysis/host.ts);
// outermostCalls: each call's outermost call (profiler/analysis/replay/replay-host.ts outerCalls).
#pragma once

#include <napi.h>

namespace streamscope::addon {

Napi::Value indexCallsBinding(const Napi::CallbackInfo& info);
Napi::Value outermostCallsBinding(const Napi::CallbackInfo& info);

}  // namespace streamscope::addon
