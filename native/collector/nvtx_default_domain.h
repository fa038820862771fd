// NVTX ranges and marks that CUPTI's MARKER activity leaves out: those
// made through NVTX's domain API on the default domain (a null domain
// handle), i.e. nvtxDomainRangePushEx/Pop, nvtxDomainRangeStartEx/End and
// nvtxDomainMarkEx with domain == nullptr. That is how the `nvtx` Python
// package makes every range and mark given no domain (`nvtx.annotate()`,
// `push_range`, `start_range`, `mark`), and how older NVTX v3 C++ makes
// `nvtx3::scoped_range` in the global domain (NVIDIA/NVTX issue 65). CUPTI
// hands out an id for such a range but never delivers a record: seen on the
// H100 with CUPTI 13.0 (ids 4 and 10 of test/gpu/scripts/nvtx_ranges.py
// missing from the stream).
//
// CUPTI's NVTX callbacks do not fire for them either (seen on the same
// machine), so nvtx_forward.cc wraps these five entries of NVTX's function
// table (and string registration, for registered messages) after CUPTI has
// filled it: each call goes to CUPTI as before, and the ones on the default
// domain also come here (through recordDefaultDomainNvtx, injection.cc) and
// become Marker records of our own, with ids from a range CUPTI never
// reaches (kOwnIdBase and up). Calls on a named domain are left to CUPTI's
// activity records, which are complete for them.
//
// Pure bookkeeping: no CUPTI or CUDA call, so it is tested with hand-built
// call data (collector_selftest.cc). The call data has CUPTI's NVTX
// callback layout (CUpti_NvtxData, generated_nvtx_meta.h parameters), the
// documented description of these calls.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <cupti.h>

#include "record_format.h"

namespace streamscope {

class NvtxDefaultDomain {
 public:
  // CUPTI's marker ids count up from 1 per process; ours start here.
  static constexpr uint32_t kOwnIdBase = 0x80000000u;

  // A Marker record to write: name and domain as text (interned by the
  // writer), domain always empty (the default domain).
  struct Marker {
    int64_t timestamp_ns = 0;
    uint32_t id = 0;
    uint32_t flags = 0;  // rs::MarkerFlags
    uint32_t thread_id = 0;
    std::string name;
  };

  // One NVTX call (cbid: CUPTI_CBID_NVTX_nvtxDomain*): true and *out filled when it makes a record.
  // timestamp_ns: relative to the file's origin; thread_id: gettid().
  bool onCallback(CUpti_CallbackId cbid, const CUpti_NvtxData& data, int64_t timestamp_ns, uint32_t thread_id, Marker* out);

 private:
  std::string messageOf(const void* event_attributes);
  uint32_t nextId();

  std::mutex mu_;  // guards everything below (callbacks come from any thread)
  uint32_t next_id_ = kOwnIdBase;
  std::map<uint64_t, uint32_t> open_start_end_;            // NVTX range id (start/end) → our id
  std::map<const void*, std::string> registered_;          // registered string handle → text
  std::map<uint32_t, std::vector<uint32_t>> push_stacks_;  // thread → our ids of open pushes
};

// Records one default-domain NVTX call as a Marker (injection.cc; a no-op
// while the collector is not recording). params/return_value: the call's
// arguments and result in generated_nvtx_meta.h's layout.
void recordDefaultDomainNvtx(CUpti_CallbackId cbid, const void* params, const void* return_value);

}  // namespace streamscope
