// The what-if replay's resources per op (profiler/analysis/replay/
// replay-resources.ts says what they model): each HtoD and DtoH copy's
// engine and whether it takes part in duplex contention, each kernel's
// share of its device's SMs. One pass over every op, on the what-if
// thread before the fix's replay can begin: ~0.11 s of JavaScript at 10 M
// operations.
//
// A kernel's blocks per SM come from its shape (threads per block,
// registers, shared memory) and its device's limits: occupancy.ts
// blocksPerSm, which this pass asks through `perSm` for each shape the
// first time it meets it (a recording has a few hundred at most), so the
// occupancy model stays in one place. The share, blocks / (SMs × blocks
// per SM) capped at 1, is computed in doubles and stored as a float, as a
// Float32Array stores the JavaScript's.
#include "op_resources.h"

#include <cstdint>
#include <unordered_map>

#include "js_math.h"
#include "trace_codes.h"
#include "typed_arrays.h"

namespace streamscope::addon {

namespace {

using trace_code::kDtoH;
using trace_code::kHtoD;
using trace_code::kKernel;
using trace_code::kMemcpy;
using trace_code::kNoShare;

// A kernel's shape on its device: what its blocks per SM depend on.
struct Shape {
  int32_t device, threads, registers, shared;
  bool operator==(const Shape& o) const {
    return device == o.device && threads == o.threads && registers == o.registers && shared == o.shared;
  }
};
struct ShapeHash {
  size_t operator()(const Shape& s) const {
    uint64_t h = static_cast<uint32_t>(s.device);
    h = h * 0x9E3779B97F4A7C15ull ^ static_cast<uint32_t>(s.threads);
    h = h * 0x9E3779B97F4A7C15ull ^ static_cast<uint32_t>(s.registers);
    h = h * 0x9E3779B97F4A7C15ull ^ static_cast<uint32_t>(s.shared);
    return static_cast<size_t>(h ^ (h >> 29));
  }
};

}  // namespace

// opResources(inputs): `engine`, `share` and `duplex` written for every op. Inputs: ops, devices (dense); per op kind,
// category, detail, devOf (dense device), blocks, blockThreads, registers, sharedBytes, commOps (1: a communication
// kernel); per dense device sharedEngine (1: one engine for both directions) and smCount (0: unknown); perSm(device,
// threads, registers, shared) → blocks per SM.
Napi::Value opResourcesBinding(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const char* what = "opResources";
  const Napi::Object o = inputsOf(info, what);
  const size_t n = count(o, what, "ops");
  const size_t D = count(o, what, "devices");
  const uint8_t* kind = typedArrayOf<uint8_t>(o, what, "kind", n);
  const uint8_t* category = typedArrayOf<uint8_t>(o, what, "category", n);
  const int32_t* detail = typedArrayOf<int32_t>(o, what, "detail", n);
  const int32_t* devOf = typedArrayOf<int32_t>(o, what, "devOf", n);
  const double* blocks = typedArrayOf<double>(o, what, "blocks", n);
  const int32_t* threads = typedArrayOf<int32_t>(o, what, "blockThreads", n);
  const int32_t* registers = typedArrayOf<int32_t>(o, what, "registers", n);
  const int32_t* shared = typedArrayOf<int32_t>(o, what, "sharedBytes", n);
  const uint8_t* comm = typedArrayOf<uint8_t>(o, what, "commOps", n);
  const uint8_t* sharedEngine = typedArrayOf<uint8_t>(o, what, "sharedEngine", D);
  const double* smCount = typedArrayOf<double>(o, what, "smCount", D);
  int32_t* engine = typedArrayOf<int32_t>(o, what, "engine", n);
  float* share = typedArrayOf<float>(o, what, "share", n);
  uint8_t* duplex = typedArrayOf<uint8_t>(o, what, "duplex", n);
  const Napi::Value perSmValue = o.Get("perSm");
  if (!perSmValue.IsFunction()) throw Napi::TypeError::New(env, "opResources: perSm must be a function");
  const Napi::Function perSm = perSmValue.As<Napi::Function>();
  checkIndexes(env, what, "devOf", devOf, n, 0, static_cast<int64_t>(D));

  std::unordered_map<Shape, double, ShapeHash> perSmOf;
  // Kernels of one shape follow each other: the last shape's blocks per SM is kept, as the JavaScript kept it.
  Shape last{-1, -1, -1, -1};
  double lastPerSm = 0;
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
      if (!sharedEngine[d] && trace_code::pinnedDirection(k, cat, detail[i]) >= 0) duplex[i] = 1;
      continue;
    }
    engine[i] = -1;
    if (k != kKernel) continue;
    if (comm[i]) {
      share[i] = kNoShare;
      continue;
    }
    // A device without its SM count (a device row missing, or its count unknown: 0), or a kernel of no blocks: no limit.
    if (smCount[d] == 0 || blocks[i] <= 0) continue;
    const Shape shape{d, threads[i], registers[i], shared[i]};
    if (!(shape == last)) {
      last = shape;
      auto it = perSmOf.find(shape);
      if (it == perSmOf.end()) {
        const Napi::Value v = perSm.Call({Napi::Number::New(env, d), Napi::Number::New(env, shape.threads),
                                          Napi::Number::New(env, shape.registers), Napi::Number::New(env, shape.shared)});
        if (!v.IsNumber()) throw Napi::TypeError::New(env, "opResources: perSm must return a number");
        it = perSmOf.emplace(shape, v.As<Napi::Number>().DoubleValue()).first;
      }
      lastPerSm = it->second;
    }
    share[i] = static_cast<float>(jsMin(1.0, blocks[i] / (smCount[d] * lastPerSm)));
  }
  return env.Undefined();
}

}  // namespace streamscope::addon
