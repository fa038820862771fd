// The launch-bound rule's passes (profiler/analysis/diagnosis/findings/launch-bound.ts
// holds the rule: its thresholds, its finding's words): per device, the
// median time the host spent launching one of its kernels, then its kernels
// shorter than that which the GPU idled before, and how long. At 10 M
// kernels the passes and the median took ~0.3 s of JavaScript, before the
// rule names the CUDA-graph fix and the what-if thread may replay it; the
// same arithmetic here, in the same order, with JavaScript's Math.max
// (js_math.h), gives the same values.
#include "launch_gaps.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "js_math.h"
#include "order_statistics.h"
#include "trace_codes.h"
#include "typed_arrays.h"

namespace streamscope::addon {

using trace_code::kKernel;

// launchGaps(inputs) → per device list in `onDevice` (its ops' indexes in start order), {kernels, launches} and, where
// both reach `minKernels`, {launchNs, short, idleNs, evidence}: launchNs the median launch call of its kernels (a call
// that launched several, a graph's, shared out among them); short the kernels shorter than that, started after a gap
// in the device's work of less than `gapFactor` launches, idleNs those gaps summed, evidence the first `evidence` of
// those kernels (op indexes).
Napi::Value launchGapsBinding(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const char* what = "launchGaps";
  const Napi::Object o = inputsOf(info, what);
  const size_t n = count(o, what, "ops");
  const size_t nc = count(o, what, "calls");
  const size_t minKernels = count(o, what, "minKernels");
  const double gapFactor = number(o, what, "gapFactor");
  const size_t evidence = count(o, what, "evidence");
  const uint8_t* kind = typedArrayOf<uint8_t>(o, what, "kind", n);
  const double* start = typedArrayOf<double>(o, what, "start", n);
  const double* end = typedArrayOf<double>(o, what, "end", n);
  const int32_t* opCall = typedArrayOf<int32_t>(o, what, "opCall", n);
  const double* callStart = typedArrayOf<double>(o, what, "callStart", nc);
  const double* callEnd = typedArrayOf<double>(o, what, "callEnd", nc);
  checkIndexes(env, what, "opCall", opCall, n, -1, static_cast<int64_t>(nc));
  const std::vector<IndexList> devices = indexListsOf(o, what, "onDevice", 0, static_cast<int64_t>(n));

  // Kernels per call: a call that launched several (a cudaGraphLaunch: every node's kernel has its correlation id) cost
  // each of them its share; a graph's 40 kernels are not each 38 µs "launches".
  std::vector<int32_t> launched(nc);
  for (size_t i = 0; i < n; i++)
    if (kind[i] == kKernel && opCall[i] >= 0) launched[opCall[i]]++;

  Napi::Array out = Napi::Array::New(env, devices.size());
  std::vector<double> cost;
  for (uint32_t dv = 0; dv < devices.size(); dv++) {
    const int32_t* on = devices[dv].data;
    const size_t m = devices[dv].length;
    Napi::Object r = Napi::Object::New(env);
    out.Set(dv, r);
    size_t kernels = 0;
    cost.clear();
    // At most one cost per op: reserved at once, not grown by doubling (at 10 M kernels, 160 MB of fresh pages and
    // their copies; what is reserved and never written is never faulted in).
    cost.reserve(m);
    for (size_t j = 0; j < m; j++) {
      const int32_t i = on[j];
      if (kind[i] != kKernel) continue;
      kernels++;
      const int32_t k = opCall[i];
      if (k >= 0) cost.push_back((callEnd[k] - callStart[k]) / launched[k]);
    }
    r.Set("kernels", static_cast<double>(kernels));
    r.Set("launches", static_cast<double>(cost.size()));
    if (kernels < minKernels || cost.size() < minKernels) continue;
    const double launch = upperMedian(cost.data(), cost.size());
    // Idle time right before a short kernel: the GPU was waiting for it to be launched.
    double idle = 0;
    size_t shortKernels = 0;
    double last = -kInf;  // end of the latest op on the device so far
    std::vector<int32_t> shown;
    for (size_t j = 0; j < m; j++) {
      const int32_t i = on[j];
      if (kind[i] == kKernel) {
        const double d = end[i] - start[i];
        const double gap = start[i] - last;
        if (d < launch && gap > 0 && gap < gapFactor * launch) {
          shortKernels++;
          idle += gap;
          if (shortKernels <= evidence) shown.push_back(i);
        }
      }
      last = jsMax(last, end[i]);
    }
    r.Set("launchNs", launch);
    r.Set("short", static_cast<double>(shortKernels));
    r.Set("idleNs", idle);
    r.Set("evidence", numbersOf(env, shown));
  }
  return out;
}

}  // namespace streamscope::addon
