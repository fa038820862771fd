// The analysis's codes as the TypeScript defines them, for the native passes
// over its arrays (replay_scheduler.cc, graph_capture.cc, issue_walk.cc and the others): one definition
// here, as profiler/analysis/trace.ts and replay/replay-host.ts give them.
#pragma once

#include <cstdint>

namespace streamscope::addon::trace_code {

// OpKind (trace.ts).
inline constexpr uint8_t kKernel = 1;
inline constexpr uint8_t kMemcpy = 2;
// OpCategory (trace.ts): kernels' (the SMs), the two host copy directions.
inline constexpr uint8_t kCompute = 0;
inline constexpr uint8_t kHtoD = 1;
inline constexpr uint8_t kDtoH = 2;
// A copy's memory kind as ops.detail holds it (src * 16 + dst): pageable host memory.
inline constexpr int32_t kPageable = 1;
// WaitKind (replay-host.ts): a call waits for nothing, for one op, or for a prefix of its context's ops.
inline constexpr uint8_t kWaitNone = 0;
inline constexpr uint8_t kWaitOp = 1;
inline constexpr uint8_t kWaitPrefix = 2;
// NameClass (replay-host.ts): what a call may wait for, by its name.
inline constexpr uint8_t kNameOther = 0;
inline constexpr uint8_t kNameDevice = 1;
inline constexpr uint8_t kNameStream = 2;
inline constexpr uint8_t kNameEvent = 3;
inline constexpr uint8_t kNameImplicit = 4;
// A kernel's share of its device's SMs (replay-resources.ts): a communication kernel's (NCCL's), outside the SM model.
inline constexpr float kNoShare = -1;

// bandwidth.ts pinnedDirection: a copy that takes part in duplex contention, 0 HtoD, 1 DtoH (its host side pinned,
// not pageable: pageable copies are bound by staging, not the link); -1 for any other op.
inline int pinnedDirection(uint8_t kind, uint8_t category, int32_t detail) {
  if (kind != kMemcpy) return -1;
  if (category == kHtoD) return detail >> 4 != kPageable ? 0 : -1;
  if (category == kDtoH) return (detail & 15) != kPageable ? 1 : -1;
  return -1;
}

}  // namespace streamscope::addon::trace_code
