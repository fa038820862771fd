// Each operation's copy engine, SM share and part in duplex contention
// (profiler/analysis/replay/replay-resources.ts opResources says the model
// and builds the inputs). One pass over every operation, made once per
// recording by the what-if thread before the fix's replay can begin: ~0.14 s
// of JavaScript at 10 M operations. The same arithmetic as occupancy.ts
// blocksPerSm and bandwidth.ts isPinnedTransfer, in the same order, so the
// same values.
#include "op_resources.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "typed_arrays.h"

namespace streamscope::addon {

namespace {

// OpKind (trace.ts), OpCategory.
constexpr uint8_t kKernel = 1, kMemcpy = 2;
constexpr uint8_t kHtoD = 1, kDtoH = 2;
// replay-resources.ts NO_SHARE: a communication kernel, outside the SM model.
constexpr float kNoShare = -1;

// A device's per-SM limits (devices table; 0: unknown, as a missing value is falsy in JavaScript).
struct Limits {
  double smCount, maxBlocks, maxThreads, maxRegisters, maxShared;
};

// occupancy.ts blocksPerSm: resident blocks per SM for a kernel shape; at least 1.
double blocksPerSm(const Limits& d, double threads, double registers, double shared) {
  double b = d.maxBlocks;
  if (d.maxThreads && threads > 0) b = std::min(b, std::floor(d.maxThreads / threads));
  if (d.maxRegisters && registers > 0 && threads > 0) b = std::min(b, std::floor(d.maxRegisters / (registers * threads)));
  if (d.maxShared && shared > 0) b = std::min(b, std::floor(d.maxShared / shared));
  return std::max(1.0, b);
}

}  // namespace

// opResources(inputs): engine, share and duplex (the caller's arrays) written for every op.
Napi::Value opResourcesBinding(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsObject()) throw Napi::TypeError::New(env, "opResources(inputs)");
  const Napi::Object o = info[0].As<Napi::Object>();
  const char* what = "opResources";
  const Napi::Value ops = o.Get("ops");
  if (!ops.IsNumber() || ops.As<Napi::Number>().DoubleValue() < 0) throw Napi::TypeError::New(env, "opResources: ops is not a count");
  const size_t n = static_cast<size_t>(ops.As<Napi::Number>().Int64Value());
  size_t devices = 0, names = 0;
  const uint8_t* kind = typedArrayOf<uint8_t>(o, what, "kind", n);
  const uint8_t* category = typedArrayOf<uint8_t>(o, what, "category", n);
  const int32_t* detail = typedArrayOf<int32_t>(o, what, "detail", n);
  const double* blocks = typedArrayOf<double>(o, what, "blocks", n);
  const int32_t* blockThreads = typedArrayOf<int32_t>(o, what, "blockThreads", n);
  const int32_t* registers = typedArrayOf<int32_t>(o, what, "registers", n);
  const int32_t* sharedBytes = typedArrayOf<int32_t>(o, what, "sharedBytes", n);
  const int32_t* devOf = typedArrayOf<int32_t>(o, what, "devOf", n);
  // Per dense device: 1 where one engine serves both directions; its limits, five to a device (smCount, max blocks,
  // threads, registers, shared memory per SM; smCount 0 for a device not in the table).
  const uint8_t* sharedEngine = typedArray<uint8_t>(o, what, "sharedEngine", devices);
  const double* limits = typedArrayOf<double>(o, what, "limits", devices * 5);
  // Per name id: 1 for an NCCL kernel's (null: none in the recording).
  const uint8_t* comm = typedArray<uint8_t>(o, what, "commNames", names, true);
  int32_t* engine = typedArrayOf<int32_t>(o, what, "engine", n);
  float* share = typedArrayOf<float>(o, what, "share", n);
  uint8_t* duplex = typedArrayOf<uint8_t>(o, what, "duplex", n);
  checkIndexes(env, what, "devOf", devOf, n, 0, static_cast<int64_t>(devices));

  for (size_t i = 0; i < n; i++) {
    const uint8_t k = kind[i];
    const int32_t d = devOf[i];
    if (k == kMemcpy) {
      const uint8_t cat = category[i];
      if (cat != kHtoD && cat != kDtoH) {
        engine[i] = -1;
        continue;
      }
      engine[i] = d * 2 + (sharedEngine[d] || cat == kHtoD ? 0 : 1);
      // bandwidth.ts isPinnedTransfer: neither side pageable host memory (memory kind 1).
      const bool pinned = cat == kHtoD ? (detail[i] >> 4) != 1 : (detail[i] & 15) != 1;
      if (!sharedEngine[d] && pinned) duplex[i] = 1;
      continue;
    }
    engine[i] = -1;
    if (k != kKernel) continue;
    if (comm && detail[i] >= 0 && static_cast<size_t>(detail[i]) < names && comm[detail[i]]) {
      share[i] = kNoShare;
      continue;
    }
    const double* l = limits + 5 * d;
    if (!l[0] || blocks[i] <= 0) continue;
    const Limits dev{l[0], l[1], l[2], l[3], l[4]};
    const double perSm = blocksPerSm(dev, blockThreads[i], registers[i], sharedBytes[i]);
    share[i] = static_cast<float>(std::min(1.0, blocks[i] / (dev.smCount * perSm)));
  }
  return env.Undefined();
}

}  // namespace streamscope::addon
