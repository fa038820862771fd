// The host model's latency samples (profiler/analysis/replay/replay-host.ts
// measureLatencies says what each latency is and takes their medians): one
// pass over every op, in start order, sampling the lag of each op whose
// start one thing alone decided — its call's return, the op it depended
// on, its engine's previous copy (of its own stream or another's). At 10 M
// operations the pass took ~0.11 s of JavaScript on the what-if thread,
// before the fix's replay can begin; the same comparisons here, in the same
// order, with JavaScript's Math.max (js_math.h), sample the same values.
#include "latency_samples.h"

#include <cstdint>
#include <string>
#include <vector>

#include "js_math.h"
#include "trace_codes.h"
#include "typed_arrays.h"

namespace streamscope::addon {

using namespace trace_code;

// latencySamples(inputs) → {launch, dependency, engine, chain, all}: lists of lags (ns), the first `samples` of each,
// per device × op kind (launch, dependency: dense device * 4 + kind), per device × engine (engine, chain: device * 2 +
// engine, 0 HtoD or the one engine of a device with one, 1 DtoH) and per device (all: every op's lag after its call).
// An op is sampled where it has a call (opCall ≥ 0) that did not wait for it (waitsOwn 0).
Napi::Value latencySamplesBinding(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const char* what = "latencySamples";
  const Napi::Object o = inputsOf(info, what);
  const size_t n = count(o, what, "ops");
  const size_t nc = count(o, what, "calls");
  const size_t devices = count(o, what, "devices");
  const size_t samples = count(o, what, "samples");
  const double clearNs = number(o, what, "clearNs");
  const double withinNs = number(o, what, "withinNs");
  const uint8_t* kind = typedArrayOf<uint8_t>(o, what, "kind", n);
  const uint8_t* category = typedArrayOf<uint8_t>(o, what, "category", n);
  const double* opStart = typedArrayOf<double>(o, what, "start", n);
  const double* opEnd = typedArrayOf<double>(o, what, "end", n);
  const int32_t* stream = typedArrayOf<int32_t>(o, what, "stream", n);
  const int32_t* devOf = typedArrayOf<int32_t>(o, what, "devOf", n);
  const int32_t* opCall = typedArrayOf<int32_t>(o, what, "opCall", n);
  const double* depEnd = typedArrayOf<double>(o, what, "depEnd", n);
  const double* callEnd = typedArrayOf<double>(o, what, "callEnd", nc);
  const uint8_t* waitsOwn = typedArrayOf<uint8_t>(o, what, "waitsOwn", nc);
  const uint8_t* sharedEngine = typedArrayOf<uint8_t>(o, what, "sharedEngine", devices);
  checkIndexes(env, what, "devOf", devOf, n, 0, static_cast<int64_t>(devices));
  checkIndexes(env, what, "opCall", opCall, n, -1, static_cast<int64_t>(nc));

  std::vector<std::vector<double>> launch(devices * 4), dependency(devices * 4), engine(devices * 2), chain(devices * 2), all(devices);
  auto add = [&](std::vector<double>& l, double v) {
    if (l.size() < samples) l.push_back(v);
  };
  std::vector<int32_t> engineStream(devices * 2, -1);
  std::vector<double> engineEnd(devices * 2, -kInf);
  for (size_t i = 0; i < n; i++) {
    const int32_t k = opCall[i];
    const int32_t d = devOf[i];
    const uint8_t cat = category[i];
    const uint8_t kd = kind[i];
    if (kd > 3)
      throw Napi::RangeError::New(env, std::string(what) + ": kind[" + std::to_string(i) + "] = " + std::to_string(kd) + " is no op kind");
    const int32_t eng = kd == kMemcpy && (cat == kHtoD || cat == kDtoH) ? d * 2 + (sharedEngine[d] || cat == kHtoD ? 0 : 1) : -1;
    const double dep = depEnd[i];
    const double busy = eng >= 0 ? engineEnd[eng] : -kInf;
    if (k >= 0 && !waitsOwn[k]) {
      const double issued = callEnd[k];
      const double start = opStart[i];
      add(all[d], start - issued);
      // Only one thing decided the start: sample that latency.
      if (issued >= dep && issued >= busy) add(launch[d * 4 + kd], start - issued);
      else if (eng >= 0 && busy == dep && engineStream[eng] == stream[i] && dep > issued + clearNs && start >= dep &&
               start - dep < withinNs)
        add(chain[eng], start - dep);
      else if (dep > issued + clearNs && dep >= busy && start >= dep && start - dep < withinNs) add(dependency[d * 4 + kd], start - dep);
      else if (eng >= 0 && busy > issued + clearNs && busy > dep && start >= busy && start - busy < withinNs)
        add(engine[eng], start - busy);
    }
    if (eng >= 0) {
      engineEnd[eng] = jsMax(busy, opEnd[i]);
      engineStream[eng] = stream[i];
    }
  }
  Napi::Object result = Napi::Object::New(env);
  result.Set("launch", listsOf(env, launch));
  result.Set("dependency", listsOf(env, dependency));
  result.Set("engine", listsOf(env, engine));
  result.Set("chain", listsOf(env, chain));
  result.Set("all", listsOf(env, all));
  return result;
}

}  // namespace streamscope::addon
