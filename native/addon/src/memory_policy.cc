// A one-shot command's heap keeps the memory it frees, for the arrays it
// allocates next. An analysis of 10 M operations allocates ~2.5 GB of
// arrays, one after another: the loader's columns, then the host model's,
// the what-if's. glibc maps each large block afresh and unmaps it when
// freed, and every page of a fresh map costs a fault, ~2 s a GB on a VM
// whose host takes freed memory back (1.2 M faults, a third of the
// analysis's CPU time on the development VM). With the heap serving every
// block and never trimmed, a block freed is reused by the next one: the
// 10 M analysis 3.7 → 3.3 s, its peak resident memory 2.9 → 3.6 GB (3.0 GB
// since the loader reads into the analysis's own arrays and the threads
// share one heap).
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
  // No block of its own map (M_MMAP_MAX 0: every block from the heap), and the heap's top never given back. One heap
  // for every thread (M_ARENA_MAX 1): a block one thread freed (the loader's, the analysing thread's) is reused by the
  // what-if thread's next one, where each thread's own heap faulted its pages afresh (10 M operations: 50 k faults and
  // 180 MB fewer, the analysis ~0.1 s shorter; its large blocks are few, so one lock costs nothing measurable).
  const bool kept = mallopt(M_MMAP_MAX, 0) == 1 && mallopt(M_TRIM_THRESHOLD, INT32_MAX) == 1 && mallopt(M_ARENA_MAX, 1) == 1;
  return Napi::Boolean::New(info.Env(), kept);
#else
  return Napi::Boolean::New(info.Env(), false);
#endif
}

}  // namespace streamscope::addon
