// launchGaps: the launch-bound rule's passes, per device its median launch
// and the short kernels the GPU idled before (launch_gaps.cc;
// profiler/analysis/diagnosis/findings/launch-bound.ts holds the rule).
#pragma once

#include <napi.h>

namespace streamscope::addon {

Napi::Value launchGapsBinding(const Napi::CallbackInfo& info);

}  // namespace streamscope::addon
