// The host model's dense indexes (profiler/analysis/replay/replay-host.ts
// denseIndices says what they are): per op its dense device, stream and
// context, the devices, streams and contexts only ops name numbered in the
// order the ops first name them. One pass over every op, on the what-if
// thread before the host model's walk: ~0.06 s of JavaScript at 10 M
// operations. The tables' own devices and streams are numbered first, by
// the TypeScript, which also keeps what comes after the pass (the contexts
// of streams no op is on, each stream's flags).
#include "dense_indices.h"

#include <cmath>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "small_int_map.h"
#include "typed_arrays.h"

namespace streamscope::addon {

// denseIndices(inputs) → {devices, streams, streamPids, contexts, contextPids}: devOf, streamOfOp and ctxOfOp written
// (devOf and ctxOfOp where not 0: fresh arrays are zeroed, and a recording of one device and one context leaves their
// pages untouched). Inputs: ops; per op device, stream, pid; the devices table's ids and their dense indexes
// (tableDevices, tableDeviceIndex); the streams table's ids in its order (tableStreams) and each one's context id
// (tableStreamContext: NaN where it has none). Returned, in order of first sight: the ids of devices and of streams only
// ops name (and each such stream's process, its first op's), the contexts' keys (a table stream's context id, else
// 1e9 + pid × 1024 + dense device: one context per process and device) and each one's process.
Napi::Value denseIndicesBinding(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const char* what = "denseIndices";
  const Napi::Object o = inputsOf(info, what);
  const size_t n = count(o, what, "ops");
  const int32_t* device = typedArrayOf<int32_t>(o, what, "device", n);
  const int32_t* stream = typedArrayOf<int32_t>(o, what, "stream", n);
  const int32_t* pid = typedArrayOf<int32_t>(o, what, "pid", n);
  size_t nd = 0, ns = 0, nsc = 0, ndi = 0;
  const double* tableDevices = typedArray<double>(o, what, "tableDevices", nd);
  const double* tableDeviceIndex = typedArray<double>(o, what, "tableDeviceIndex", ndi);
  const double* tableStreams = typedArray<double>(o, what, "tableStreams", ns);
  const double* tableStreamContext = typedArray<double>(o, what, "tableStreamContext", nsc);
  if (ndi != nd) throw Napi::RangeError::New(env, "denseIndices: tableDeviceIndex must hold one index per device of tableDevices");
  if (nsc != ns) throw Napi::RangeError::New(env, "denseIndices: tableStreamContext must hold one context per stream of tableStreams");
  int32_t* devOf = typedArrayOf<int32_t>(o, what, "devOf", n);
  int32_t* streamOfOp = typedArrayOf<int32_t>(o, what, "streamOfOp", n);
  int32_t* ctxOfOp = typedArrayOf<int32_t>(o, what, "ctxOfOp", n);

  SmallIntMap<int32_t> devLookup;
  for (size_t k = 0; k < nd; k++) devLookup.set(static_cast<int64_t>(tableDevices[k]), static_cast<int32_t>(tableDeviceIndex[k]));
  size_t devices = nd;
  std::vector<double> newDevices;
  SmallIntMap<int32_t> streamLookup;
  // Per dense stream: its context (-1: none yet) and, for the table's, its row's context id.
  std::vector<int32_t> ctxOfStream(ns, -1);
  for (size_t k = 0; k < ns; k++) streamLookup.set(static_cast<int64_t>(tableStreams[k]), static_cast<int32_t>(k));
  std::vector<double> newStreams, newStreamPids;
  std::unordered_map<double, int32_t> ctxIndex;
  std::vector<double> contexts, contextPids;

  int64_t lastDevId = INT64_MIN;
  int32_t d = -1;
  for (size_t i = 0; i < n; i++) {
    // Consecutive ops mostly share a device: the last one's index is kept.
    if (device[i] != lastDevId) {
      lastDevId = device[i];
      d = devLookup.get(lastDevId);
      if (d < 0) {
        d = static_cast<int32_t>(devices++);
        devLookup.set(lastDevId, d);
        newDevices.push_back(static_cast<double>(lastDevId));
      }
    }
    if (d != 0) devOf[i] = d;
    int32_t st = streamLookup.get(stream[i]);
    if (st < 0) {
      st = static_cast<int32_t>(ns + newStreams.size());
      streamLookup.set(stream[i], st);
      newStreams.push_back(stream[i]);
      newStreamPids.push_back(pid[i]);
      ctxOfStream.push_back(-1);
    }
    streamOfOp[i] = st;
    int32_t c = ctxOfStream[st];
    if (c < 0) {
      // The stream's row's context; a stream without one (not in the table, or no context id): one context per
      // process and device (the same arithmetic, in the same order, as the TypeScript's).
      const double own = static_cast<size_t>(st) < ns ? tableStreamContext[st] : NAN;
      const double key = std::isnan(own) ? 1e9 + static_cast<double>(pid[i]) * 1024 + d : own;
      auto it = ctxIndex.find(key);
      if (it == ctxIndex.end()) {
        it = ctxIndex.emplace(key, static_cast<int32_t>(contexts.size())).first;
        contexts.push_back(key);
        contextPids.push_back(pid[i]);
      }
      c = it->second;
      ctxOfStream[st] = c;
    }
    if (c != 0) ctxOfOp[i] = c;
  }
  Napi::Object r = Napi::Object::New(env);
  r.Set("devices", numbersOf(env, newDevices));
  r.Set("streams", numbersOf(env, newStreams));
  r.Set("streamPids", numbersOf(env, newStreamPids));
  r.Set("contexts", numbersOf(env, contexts));
  r.Set("contextPids", numbersOf(env, contextPids));
  return r;
}

}  // namespace streamscope::addon
