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

#include <sys/mman.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace streamscope::addon {

namespace {
// Whether the policy is in force (the whole process's, for the rest of its life; set on the thread that took it, read
// on any: an atomic).
std::atomic<bool> kept_{false};
constexpr uintptr_t kPage = 4096;
}  // namespace

// keepFreedMemory() → whether the allocator took the policy (glibc's does; elsewhere nothing changes).
Napi::Value keepFreedMemoryBinding(const Napi::CallbackInfo& info) {
#if defined(__GLIBC__)
  // No block of its own map (M_MMAP_MAX 0: every block from the heap), and the heap's top never given back. One heap
  // for every thread (M_ARENA_MAX 1): a block one thread freed (the loader's, the analysing thread's) is reused by the
  // what-if thread's next one, where each thread's own heap faulted its pages afresh (10 M operations: 50 k faults and
  // 180 MB fewer, the analysis ~0.1 s shorter; its large blocks are few, so one lock costs nothing measurable).
  const bool kept = mallopt(M_MMAP_MAX, 0) == 1 && mallopt(M_TRIM_THRESHOLD, INT32_MAX) == 1 && mallopt(M_ARENA_MAX, 1) == 1;
  kept_ = kept_ || kept;
  return Napi::Boolean::New(info.Env(), kept);
#else
  return Napi::Boolean::New(info.Env(), false);
#endif
}

// mapOwnBlocks(on) → whether it took: while on, a block of 128 KiB or
// more gets a map of its own (glibc's default) instead of the kept heap.
// For arrays that live as long as the process and that a loader writes
// whole (the analysis's shared columns: native/addon.ts
// loadSharedTimelineColumns): the heap's pages are cleared by calloc on
// the allocating thread first (V8 zeroes every SharedArrayBuffer; glibc
// clears a heap block, but knows a fresh map is zero), a map of its own is
// first touched by the loader's writes, which can then be backed by huge
// pages (adviseHugePages). Taken only under the policy above (without it
// glibc maps such blocks so anyway); a block another thread allocates
// meanwhile gets its own map too, unmapped when it is freed.
Napi::Value mapOwnBlocksBinding(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsBoolean()) throw Napi::TypeError::New(env, "mapOwnBlocks(on: boolean)");
#if defined(__GLIBC__)
  // M_MMAP_MAX's default (glibc's DEFAULT_MMAP_MAX) when on.
  if (!kept_) return Napi::Boolean::New(env, false);
  return Napi::Boolean::New(env, mallopt(M_MMAP_MAX, info[0].As<Napi::Boolean>().Value() ? 65536 : 0) == 1);
#else
  return Napi::Boolean::New(env, false);
#endif
}

// adviseHugePages(data, bytes): the whole pages of an array about to be
// written whole, backed by 2 MiB pages where the kernel's THP mode allows
// ("madvise" or "always"). On the development VM a fresh 4 KiB page cost
// 1.2 – 1.9 µs to map (the host backs it then): the 10 M analysis's load
// took 378 k of its ~700 k faults; with its columns in huge pages 104 k,
// the load 1.18 → 0.91 s and the analysis 3.15 → 2.39 s (medians of 8
// pairs alternated against the commit before, each pair shorter). Only
// for memory the process has not touched yet: a huge page over pages
// mapped already is assembled later by the kernel's background thread.
void adviseHugePages(void* data, size_t bytes) {
#if defined(MADV_HUGEPAGE)
  const uintptr_t from = (reinterpret_cast<uintptr_t>(data) + kPage - 1) & ~(kPage - 1);
  const uintptr_t to = (reinterpret_cast<uintptr_t>(data) + bytes) & ~(kPage - 1);
  // Under 2 MiB no huge page fits; the kernel refuses where THP is off (EINVAL): the pages are then as they were.
  if (to >= from + (uintptr_t{2} << 20)) madvise(reinterpret_cast<void*>(from), to - from, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

// prefaultHeap(bytes) → the bytes mapped: the heap's pages for a block of
// `bytes`, mapped now, on this thread, for whichever thread allocates
// there next (the what-if thread's replay: whatif-thread.ts). Once the
// policy above is taken, a block is taken from the heap and its pages
// stay mapped when it is freed; so the block is allocated, freed at once
// (its memory goes back to the heap, to be handed out again), and its
// pages mapped for writing (MADV_POPULATE_WRITE, Linux 5.14): that writes
// nothing, so another thread that was handed the memory meanwhile sees its
// contents as they were. 0 where the policy is not in force (a block of
// its own map would be unmapped when freed) or the kernel cannot.
Napi::Value prefaultHeapBinding(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsNumber()) throw Napi::TypeError::New(env, "prefaultHeap(bytes: number)");
  const double want = info[0].As<Napi::Number>().DoubleValue();
  if (!(want >= 0 && want <= 1e12)) throw Napi::RangeError::New(env, "prefaultHeap: bytes must be in [0, 1e12]");
#if defined(__GLIBC__) && defined(MADV_POPULATE_WRITE)
  if (!kept_ || want < kPage) return Napi::Number::New(env, 0);
  const size_t bytes = static_cast<size_t>(want);
  void* block = std::malloc(bytes);
  if (!block) return Napi::Number::New(env, 0);
  const uintptr_t from = (reinterpret_cast<uintptr_t>(block) + kPage - 1) & ~(kPage - 1);
  const uintptr_t to = (reinterpret_cast<uintptr_t>(block) + bytes) & ~(kPage - 1);
  std::free(block);
  if (to <= from || madvise(reinterpret_cast<void*>(from), to - from, MADV_POPULATE_WRITE) != 0) return Napi::Number::New(env, 0);
  return Napi::Number::New(env, static_cast<double>(to - from));
#else
  return Napi::Number::New(env, 0);
#endif
}

}  // namespace streamscope::addon
