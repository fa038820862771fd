// keepFreedMemory: a one-shot command's heap keeps what it frees for its
// next allocations (memory_policy.cc).
#pragma once

#include <napi.h>

namespace streamscope::addon {

Napi::Value keepFreedMemoryBinding(const Napi::CallbackInfo& info);

}  // namespace streamscope::addon
