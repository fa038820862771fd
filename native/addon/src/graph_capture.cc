// The CUDA-graph fix's passes (profiler/analysis/replay/whatif.ts
// captureGraphs says what the fix models and holds its constants): the
// median launch call of a kernel, each outer call's kernels (and how many
// are shorter than that median) and whether it issues other work, the runs
// of each thread's launches with nothing between them that issues other
// work or waits, and for each run captured: its first call's time (the
// cudaGraphLaunch), its other calls' and gaps' time gone, its kernels after
// the first a graph node's gap after the one before. Five passes over every
// operation or call (10 M each at the bench's size) took ~0.5 s of
// JavaScript, between the fix being named and its replay; the same
// arithmetic here, in the same order, gives the same values.
#include "graph_capture.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "js_math.h"
#include "order_statistics.h"
#include "trace_codes.h"
#include "typed_arrays.h"

namespace streamscope::addon {

using trace_code::kKernel;
using trace_code::kWaitNone;

// captureGraphs(inputs) → {launches, graphs, captured, hostNs}: callGap,
// callDuration (per call; zeros as handed over) and afterLatency (per op)
// written in place where a run was captured, NaN elsewhere; where none was
// (graphs 0), of no use (afterLatency then holds the launches' durations).
Napi::Value captureGraphsBinding(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const char* what = "captureGraphs";
  const Napi::Object o = inputsOf(info, what);
  const size_t n = count(o, what, "ops");
  const size_t nc = count(o, what, "calls");
  const size_t threads = count(o, what, "threads");
  const double minKernels = number(o, what, "minKernels");
  const double nsPerNode = number(o, what, "launchNsPerNode");
  const double minLaunchNs = number(o, what, "launchMinNs");
  const double nodeGapNs = number(o, what, "nodeGapNs");
  const uint8_t* kind = typedArrayOf<uint8_t>(o, what, "kind", n);
  const double* opStart = typedArrayOf<double>(o, what, "opStart", n);
  const double* opEnd = typedArrayOf<double>(o, what, "opEnd", n);
  const int32_t* opCall = typedArrayOf<int32_t>(o, what, "opCall", n);
  const double* callStart = typedArrayOf<double>(o, what, "callStart", nc);
  const double* callEnd = typedArrayOf<double>(o, what, "callEnd", nc);
  const int32_t* outer = typedArrayOf<int32_t>(o, what, "outer", nc);
  const uint8_t* waitKind = typedArrayOf<uint8_t>(o, what, "waitKind", nc);
  const int32_t* order = typedArrayOf<int32_t>(o, what, "order", n);
  const int32_t* threadStart = typedArrayOf<int32_t>(o, what, "threadStart", threads + 1);
  const int32_t* threadCalls = typedArrayOf<int32_t>(o, what, "threadCalls", static_cast<size_t>(threadStart[threads]));
  double* callGap = typedArrayOf<double>(o, what, "callGap", nc);
  double* callDuration = typedArrayOf<double>(o, what, "callDuration", nc);
  double* afterLatency = typedArrayOf<double>(o, what, "afterLatency", n);

  const int64_t N = static_cast<int64_t>(n), NC = static_cast<int64_t>(nc);
  checkIndexes(env, what, "opCall", opCall, n, -1, NC);
  checkIndexes(env, what, "outer", outer, nc, 0, NC);
  checkIndexes(env, what, "order", order, n, 0, N);
  checkIndexes(env, what, "threadStart", threadStart, threads + 1, 0, static_cast<int64_t>(threadStart[threads]) + 1);
  checkIndexes(env, what, "threadCalls", threadCalls, static_cast<size_t>(threadStart[threads]), 0, NC);

  Napi::Object result = Napi::Object::New(env);
  // The median time the host spent in a kernel's launch call, the launches listed in afterLatency (one per op at most),
  // which the last pass below writes whole: its pages are touched once, where a list of their own was 80 MB of fresh
  // pages at 10 M kernels (~50 ms of faults on a VM).
  double* launch = afterLatency;
  size_t launches = 0;
  for (size_t i = 0; i < n; i++) {
    const int32_t k = opCall[i];
    if (k >= 0 && kind[i] == kKernel) launch[launches++] = callEnd[k] - callStart[k];
  }
  result.Set("launches", static_cast<double>(launches));
  if (static_cast<double>(launches) < minKernels) return result;
  const double launchNs = upperMedian(launch, launches);

  // Per outer call, counted in the outputs themselves (zeros as handed over: 80 MB per 10 M calls not allocated and
  // written twice): its kernels in callDuration, those shorter than the median launch in callGap, NaN there where it
  // issues other work. The runs below read a call's counts once, then write its result over them.
  double* kernels = callDuration;
  double* shorter = callGap;
  // Written once before the counts read them: an array fresh from the heap is pages never touched, and a read first
  // maps the shared zero page, the write after it a second fault that copies it and flushes every core's TLB (an
  // interrupt to each: costly in a VM). 0.21 s of this pass's 0.38 s at 10 M calls went to those faults.
  std::fill_n(kernels, nc, 0.0);
  std::fill_n(shorter, nc, 0.0);
  for (size_t i = 0; i < n; i++) {
    const int32_t k = opCall[i];
    if (k < 0) continue;
    const int32_t c = outer[k];
    if (kind[i] != kKernel) {
      shorter[c] = kNaN;
    } else {
      kernels[c]++;
      if (opEnd[i] - opStart[i] < launchNs) shorter[c]++;
    }
  }

  double graphs = 0, captured = 0, hostNs = 0;
  // Each thread's runs: its outer calls from calls[from], up to the last with kernels (calls[lastLaunch]).
  for (size_t th = 0; th < threads; th++) {
    const int32_t* calls = threadCalls + threadStart[th];
    const int32_t count = threadStart[th + 1] - threadStart[th];
    int32_t from = -1;  // -1: no run open
    int32_t lastLaunch = -1;
    auto close = [&](int32_t to) {
      if (from < 0) return;
      double kernelCount = 0, shortCount = 0;
      for (int32_t j = from; j <= lastLaunch; j++) {
        const int32_t k = calls[j];
        if (outer[k] != k) continue;
        kernelCount += kernels[k];
        shortCount += shorter[k];
      }
      const bool capture = kernelCount >= minKernels && 2 * shortCount >= kernelCount;
      if (capture) {
        hostNs += callEnd[calls[lastLaunch]] - callStart[calls[from]] - std::max(minLaunchNs, kernelCount * nsPerNode);
        graphs++;
        captured += kernelCount;
      }
      // The run's first call becomes the cudaGraphLaunch, its other calls up to its last launch are gone; the calls
      // after that (they belong to what follows), and every call of a run not captured, stay as recorded.
      for (int32_t j = from; j < to; j++) {
        const int32_t k = calls[j];
        if (outer[k] != k) continue;
        const bool in = capture && j <= lastLaunch;
        callDuration[k] = !in ? kNaN : j == from ? std::max(minLaunchNs, kernelCount * nsPerNode) : 0;
        callGap[k] = in && j > from ? 0 : kNaN;
      }
      from = -1;
      lastLaunch = -1;
    };
    for (int32_t j = 0; j < count; j++) {
      const int32_t k = calls[j];
      if (outer[k] != k) {
        // Its ops are its outer call's: nothing counted here.
        callDuration[k] = callGap[k] = kNaN;
        continue;
      }
      if (std::isnan(shorter[k]) || waitKind[k] != kWaitNone) {
        close(j);
        callDuration[k] = callGap[k] = kNaN;
      } else if (kernels[k] > 0 || from >= 0) {
        if (from < 0) from = j;
        if (kernels[k] > 0) lastLaunch = j;
      } else {
        callDuration[k] = callGap[k] = kNaN;
      }
    }
    close(count);
  }
  result.Set("graphs", graphs);
  result.Set("captured", captured);
  result.Set("hostNs", hostNs);
  if (graphs == 0) return result;

  // On the GPU: each captured kernel after the first of its graph follows the one before it as a graph node does.
  // Every op is written once (the issue order holds them all). A captured run's first call is the one whose time
  // is the graph launch's (the others' is 0).
  int32_t seenFirst = -1;
  for (size_t p = 0; p < n; p++) {
    const int32_t i = order[p];
    const int32_t k = opCall[i];
    afterLatency[i] = kNaN;
    if (k < 0 || kind[i] != kKernel) continue;
    const int32_t c = outer[k];
    if (std::isnan(callDuration[c])) continue;
    if (callDuration[c] > 0 && seenFirst != c) {
      seenFirst = c;  // the graph's first kernel: after its launch, as recorded
      continue;
    }
    afterLatency[i] = nodeGapNs;
  }
  return result;
}

}  // namespace streamscope::addon
