// keepFreedMemory: a one-shot command's heap keeps what it frees for its
// next allocations; prefaultHeap: maps a block's pages ahead of the thread
// that will write them (memory_policy.cc).
#pragma once

#include <napi.h>

namespace streamscope::addon {

Napi::Value keepFreedMemoryBinding(const Napi::CallbackInfo& info);
Napi::Value prefaultHeapBinding(const Napi::CallbackInfo& info);

}  // namespace streamscope::addon
