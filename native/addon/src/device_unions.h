// deviceUnions: each device's busy time and the union of its operations,
// one pass in start order (device_unions.cc; profiler/analysis/overlap.ts
// deviceUnions says what they serve).
#pragma once

#include <napi.h>

namespace streamscope::addon {

Napi::Value deviceUnionsBinding(const Napi::CallbackInfo& info);

}  // namespace streamscope::addon
