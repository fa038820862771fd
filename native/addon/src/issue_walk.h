// issueWalk: the host model's walk in issue order, what each call waited
// for and its CPU time without the wait (issue_walk.cc;
// profiler/analysis/replay/replay-host.ts says what the model infers).
#pragma once

#include <napi.h>

namespace streamscope::addon {

Napi::Value issueWalkBinding(const Napi::CallbackInfo& info);

}  // namespace streamscope::addon
