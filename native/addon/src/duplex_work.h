// Duplex contention's passes over every operation: the time pinned copies
// of the other direction overlapped each op, the large pinned copies' rates
// alone and overlapped, each op's uncontended work (duplex_work.cc;
// profiler/analysis/bandwidth.ts holds the policy).
#pragma once

#include <napi.h>

namespace streamscope::addon {

Napi::Value duplexSamplesBinding(const Napi::CallbackInfo& info);
Napi::Value uncontendedDurationsBinding(const Napi::CallbackInfo& info);

}  // namespace streamscope::addon
