// A one-shot command's heap keeps the memory it frees, for the arrays it
// allocates next. An analysis of 10 M operations allocates ~2.5 GB of
// arrays, one after another: the loader's columns, then the host model's,
// the what-if's. glibc maps each large block afresh and unmaps it when
// freed, and every page of a fresh map costs a fault, ~2 s a GB on a VM
// whose host takes freed memory back (1.2 M faults, a third of the
// analysis's CPU time on the development VM). With the heap serving every
// block and never trimmed, a block freed is reused by the next one: the
// 10 M analysis 3.7 → 3.3 s, its peak resident memory 2.9 → 3.6 GB.
// For processes that end when their command does (report, check, diff,
// summarize, export: profiler/cli/streamscope.ts); a long-running one (the
// server, the app) keeps the default, which gives memory back.
#include "memory_policy.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace streamscope::addon {

// keepFreedMemory() → whether the allocator took the policy (glibc's does; elsewhere nothing changes).
Napi::Value keepFreedMemoryBinding(const Napi::CallbackInfo& info) {
#if defined(__GLIBC__)
  // No block of its own map (M_MMAP_MAX 0: every block from the heap), and the heap's top never given back.
  const bool kept = mallopt(M_MMAP_MAX, 0) == 1 && mallopt(M_TRIM_THRESHOLD, INT32_MAX) == 1;
  return Napi::Boolean::New(info.Env(), kept);
#else
  return Napi::Boolean::New(info.Env(), false);
#endif
}

}  // namespace streamscope::addon
