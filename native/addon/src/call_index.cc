// The host calls' indexes the analysis builds over a recording's loaded
// columns (profiler/analysis/host.ts hostOf): each process's calls by
// correlation id, the call behind each GPU operation, each thread's calls.
// Five passes over ten million calls or operations took ~0.28 s of
// JavaScript on each thread that analyses a recording (the analysing thread
// and the what-if thread, both before the fix's replay can begin), ~0.1 s
// here. A process's calls by correlation id are an array over the ids' span
// where they are dense enough (id-table.ts), else a hash map (an imported
// trace, a damaged file), handed to JavaScript as its (id, call) pairs.
#include "call_index.h"
#include "typed_arrays.h"

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

namespace streamscope::addon {

namespace {

// host.ts THREAD_LANE_FACTOR (store/zone-tables.ts): a thread's key is pid × this + tid.
constexpr double kThreadLaneFactor = 4194304;

// id-table.ts denseEnough: an array may cover a span this wide for `count` ids.
bool denseEnough(double span, double count) { return span <= std::max<double>(1 << 16, 4 * count); }

// Column `name` of `o` (a typed array of T), `n` lowered to its length.
template <typename T>
const T* column(const Napi::Object& o, const char* name, size_t& n) {
  size_t length = 0;
  const T* data = typedArray<T>(o, "indexCalls", name, length);
  n = std::min(n, length);
  return data;
}

struct Process {
  int32_t pid;
  int64_t min, max;
  double count;
  // Its calls by correlation id − min: the JS array itself (no copy of 40 MB at 10 M calls); where the ids are too
  // sparse for it (empty), `sparse`.
  Napi::Int32Array table;
  std::unordered_map<uint32_t, int32_t> sparse;
  int32_t callOf(uint32_t correlation) const {
    if (table.IsEmpty()) {
      auto it = sparse.find(correlation);
      return it == sparse.end() ? -1 : it->second;
    }
    const int64_t slot = int64_t(correlation) - min;
    return slot >= 0 && slot < int64_t(table.ElementLength()) ? table.Data()[size_t(slot)] : -1;
  }
};

// A run of one thread's consecutive calls [from, to): calls switch threads
// rarely, so the runs are few, where a thread per call took 40 MB at 10 M.
struct Run {
  size_t from, to;
  int32_t thread;
};

}  // namespace

// indexCalls(calls: {pid, tid, correlation, domain}, ops: {pid, correlation},
// out: {opCall: Int32Array(ops), threadCalls: Int32Array(calls), tableOf?: (length) => Int32Array}) →
// {pids, mins, tables, threadKeys, threadEnds, opsWithCall, opsInCallOrder}, as host.ts reads it: tables[p]
// the process's Int32Array from mins[p], or its {ids, calls} pairs.
Napi::Value indexCallsBinding(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 3 || !info[0].IsObject() || !info[1].IsObject() || !info[2].IsObject())
    throw Napi::TypeError::New(env, "indexCalls(calls, ops, out)");
  const Napi::Object calls = info[0].As<Napi::Object>(), ops = info[1].As<Napi::Object>(), out = info[2].As<Napi::Object>();
  // Rows: the shortest column's length, and no more than `length` (the columns may be views of longer arrays).
  size_t nc = SIZE_MAX, n = SIZE_MAX;
  const int32_t* callPid = column<int32_t>(calls, "pid", nc);
  const int32_t* callTid = column<int32_t>(calls, "tid", nc);
  const uint32_t* callCorrelation = column<uint32_t>(calls, "correlation", nc);
  const uint8_t* domain = column<uint8_t>(calls, "domain", nc);
  const int32_t* opPid = column<int32_t>(ops, "pid", n);
  const uint32_t* opCorrelation = column<uint32_t>(ops, "correlation", n);
  for (auto [o, rows] : {std::pair<const Napi::Object*, size_t*>{&calls, &nc}, {&ops, &n}}) {
    const Napi::Value length = o->Get("length");
    if (length.IsNumber())
      *rows = std::min<size_t>(*rows, static_cast<size_t>(std::max<int64_t>(0, length.As<Napi::Number>().Int64Value())));
  }
  int32_t* opCall = typedArrayOf<int32_t>(out, "indexCalls", "opCall", n);
  int32_t* threadCalls = typedArrayOf<int32_t>(out, "indexCalls", "threadCalls", nc);

  // Each process's correlation range and call count; each thread's calls
  // counted, threads in order of first sight. Calls of one process or
  // thread come in long runs: the maps are asked where the run changes.
  std::vector<Process> processes;
  std::unordered_map<int32_t, size_t> processOf;
  std::vector<double> threadKeys;
  std::vector<int32_t> threadSize;
  std::unordered_map<double, int32_t> threadOf;
  std::vector<Run> runs;
  size_t p = 0;
  int32_t lastPid = 0;
  double lastKey = 0;
  int32_t t = -1;
  for (size_t k = 0; k < nc; k++) {
    if (k == 0 || callPid[k] != lastPid) {
      lastPid = callPid[k];
      auto [it, added] = processOf.try_emplace(lastPid, processes.size());
      if (added) processes.push_back({lastPid, callCorrelation[k], callCorrelation[k], 0, {}, {}});
      p = it->second;
    }
    Process& pr = processes[p];
    const int64_t c = callCorrelation[k];
    if (c < pr.min) pr.min = c;
    if (c > pr.max) pr.max = c;
    pr.count++;
    const double key = static_cast<double>(callPid[k]) * kThreadLaneFactor + callTid[k];
    if (k == 0 || key != lastKey) {
      lastKey = key;
      auto [it, added] = threadOf.try_emplace(key, static_cast<int32_t>(threadKeys.size()));
      if (added) {
        threadKeys.push_back(key);
        threadSize.push_back(0);
      }
      t = it->second;
      runs.push_back({k, k, t});
    }
    runs.back().to = k + 1;
    threadSize[t]++;
  }
  // Each process's calls by correlation id: the runtime call wins over the
  // driver call inside it (the one the user wrote), else the first.
  // Each dense table from out.tableOf(length) where given (host.ts: over shared memory, handed to the what-if thread),
  // else made here.
  const Napi::Value tableOf = out.Get("tableOf");
  for (Process& pr : processes) {
    if (!denseEnough(static_cast<double>(pr.max - pr.min + 1), pr.count)) continue;
    const size_t length = static_cast<size_t>(pr.max - pr.min + 1);
    if (tableOf.IsFunction()) {
      const Napi::Value made = tableOf.As<Napi::Function>().Call({Napi::Number::New(env, static_cast<double>(length))});
      if (!made.IsTypedArray() || made.As<Napi::TypedArray>().TypedArrayType() != napi_int32_array ||
          made.As<Napi::Int32Array>().ElementLength() != length)
        throw Napi::TypeError::New(env, "indexCalls: out.tableOf(length) must return an Int32Array of that length");
      pr.table = made.As<Napi::Int32Array>();
    } else {
      pr.table = Napi::Int32Array::New(env, length);
    }
    std::fill(pr.table.Data(), pr.table.Data() + pr.table.ElementLength(), -1);
  }
  lastPid = 0;
  for (size_t k = 0; k < nc; k++) {
    if (k == 0 || callPid[k] != lastPid) p = processOf[lastPid = callPid[k]];
    Process& pr = processes[p];
    const int32_t call = static_cast<int32_t>(k);
    if (pr.table.IsEmpty()) {
      auto [it, added] = pr.sparse.try_emplace(callCorrelation[k], call);
      if (!added && domain[k] == 1) it->second = call;
      continue;
    }
    int32_t& slot = pr.table.Data()[static_cast<size_t>(callCorrelation[k] - pr.min)];
    if (domain[k] == 1 || slot == -1) slot = call;
  }

  // The call behind each operation: its process's, by correlation id. Counted as they are found: how many ops have a
  // call, and whether those come in their calls' order (the host model's walk reads them: replay-host.ts opsByCall).
  const Process* pr = nullptr;
  size_t withCall = 0;
  bool inCallOrder = true;
  for (size_t i = 0, prev = 0; i < n; i++) {
    if (i == 0 || opPid[i] != lastPid) {
      lastPid = opPid[i];
      auto it = processOf.find(lastPid);
      pr = it == processOf.end() ? nullptr : &processes[it->second];
    }
    const int32_t call = pr ? pr->callOf(opCorrelation[i]) : -1;
    opCall[i] = call;
    if (call < 0) continue;
    if (withCall++ > 0 && static_cast<size_t>(call) < prev) inCallOrder = false;
    prev = static_cast<size_t>(call);
  }

  // Each thread's calls, in start order, one after the other.
  std::vector<int32_t> fill(threadSize.size());
  Napi::Int32Array threadEnds = Napi::Int32Array::New(env, threadSize.size());
  for (size_t x = 0, at = 0; x < threadSize.size(); x++) {
    fill[x] = static_cast<int32_t>(at);
    at += threadSize[x];
    threadEnds[x] = static_cast<int32_t>(at);
  }
  for (const Run& r : runs)
    for (size_t k = r.from; k < r.to; k++) threadCalls[fill[r.thread]++] = static_cast<int32_t>(k);

  Napi::Object result = Napi::Object::New(env);
  Napi::Int32Array pids = Napi::Int32Array::New(env, processes.size());
  Napi::Float64Array mins = Napi::Float64Array::New(env, processes.size());
  Napi::Array tables = Napi::Array::New(env, processes.size());
  for (size_t x = 0; x < processes.size(); x++) {
    pids[x] = processes[x].pid;
    mins[x] = static_cast<double>(processes[x].min);
    const Process& pr = processes[x];
    if (!pr.table.IsEmpty()) {
      tables.Set(static_cast<uint32_t>(x), pr.table);
      continue;
    }
    Napi::Uint32Array ids = Napi::Uint32Array::New(env, pr.sparse.size());
    Napi::Int32Array of = Napi::Int32Array::New(env, pr.sparse.size());
    size_t at = 0;
    for (const auto& [id, call] : pr.sparse) {
      ids[at] = id;
      of[at++] = call;
    }
    Napi::Object pairs = Napi::Object::New(env);
    pairs.Set("ids", ids);
    pairs.Set("calls", of);
    tables.Set(static_cast<uint32_t>(x), pairs);
  }
  Napi::Float64Array keys = Napi::Float64Array::New(env, threadKeys.size());
  std::copy(threadKeys.begin(), threadKeys.end(), keys.Data());
  result.Set("pids", pids);
  result.Set("mins", mins);
  result.Set("tables", tables);
  result.Set("threadKeys", keys);
  result.Set("threadEnds", threadEnds);
  result.Set("opsWithCall", static_cast<double>(withCall));
  result.Set("opsInCallOrder", inCallOrder);
  return result;
}

// outermostCalls(inputs): `outer` written, per call the outermost call containing it (a driver call inside a runtime
// call: the runtime call), itself if outermost; each thread's calls (`threads`, a list of Int32Arrays in start order)
// walked as replay-host.ts outermostCalls did in JavaScript (~0.06 s at 10 M calls, on both threads that analyse).
Napi::Value outermostCallsBinding(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const char* what = "outermostCalls";
  const Napi::Object o = inputsOf(info, what);
  const size_t nc = count(o, what, "calls");
  const double* start = typedArrayOf<double>(o, what, "start", nc);
  const double* end = typedArrayOf<double>(o, what, "end", nc);
  int32_t* outer = typedArrayOf<int32_t>(o, what, "outer", nc);
  for (const IndexList& calls : indexListsOf(o, what, "threads", 0, static_cast<int64_t>(nc))) {
    int32_t out = -1;
    for (size_t j = 0; j < calls.length; j++) {
      const int32_t k = calls.data[j];
      if (out >= 0 && start[k] < end[out]) outer[k] = out;
      else outer[(out = k)] = k;
    }
  }
  return env.Undefined();
}

}  // namespace streamscope::addon
