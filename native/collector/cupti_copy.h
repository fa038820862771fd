// The copy of CUPTI this library's own CUPTI calls are bound to. A process
// can hold two: PyTorch's wheels bring their own libcupti.so.13, to which the
// dynamic linker binds the collector's DT_NEEDED once `import torch` has
// loaded it, while the toolkit's copy may be loaded too (nvtx_forward.cc).
// Entry points the collector finds by name (NVTX's injection functions,
// CUPTI functions no header declares) must come from that copy: the one the
// collector subscribed to, whose records it receives.
#pragma once

namespace streamscope {

struct CuptiCopy {
  void* handle = nullptr;      // dlopen(RTLD_NOLOAD) of it; null when it cannot be told
  const char* path = nullptr;  // its file name, as the dynamic linker loaded it
  const void* base = nullptr;  // its load address
};

// Found once (dladdr of cuptiGetVersion), then the same answer.
const CuptiCopy& boundCupti();

// `name` in that copy; null when it has no such symbol (an older CUPTI).
void* cuptiSymbol(const char* name);

}  // namespace streamscope
