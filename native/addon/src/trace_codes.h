// The analysis's codes as the TypeScript defines them, for the native passes
// over its arrays (replay_scheduler.cc, graph_capture.cc): one definition
// here, as profiler/analysis/trace.ts and replay/replay-host.ts give them.
#pragma once

#include <cstdint>

namespace streamscope::addon::trace_code {

// OpKind.Kernel (trace.ts).
inline constexpr uint8_t kKernel = 1;
// WaitKind (replay-host.ts): a call waits for nothing, for one op, or for a prefix of its context's ops.
inline constexpr uint8_t kWaitNone = 0;
inline constexpr uint8_t kWaitOp = 1;
// A kernel's share of its device's SMs (replay-resources.ts): a communication kernel's (NCCL's), outside the SM model.
inline constexpr float kNoShare = -1;

}  // namespace streamscope::addon::trace_code
