// keepFreedMemory: a one-shot command's heap keeps what it frees for its
// next allocations; mapOwnBlocks: a while in which large blocks get maps
// of their own; adviseHugePages: an array about to be written whole backed
// by huge pages; prefaultHeap: maps a block's pages ahead of the thread
// that will write them (memory_policy.cc).
#pragma once

#include <napi.h>

#include <cstddef>

namespace streamscope::addon {

Napi::Value keepFreedMemoryBinding(const Napi::CallbackInfo& info);
Napi::Value prefaultHeapBinding(const Napi::CallbackInfo& info);
Napi::Value mapOwnBlocksBinding(const Napi::CallbackInfo& info);
void adviseHugePages(void* data, size_t bytes);

}  // namespace streamscope::addon
