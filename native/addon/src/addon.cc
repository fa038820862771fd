// Module entry: devices(), cuptiInfo(path?), class Ingest, loadOps(path), loadCalls(path), loadTimeline(path), checkTimeline(path),
// indexCalls(calls, ops, out), outermostCalls(inputs), replaySchedule(inputs), captureGraphs(inputs), issueWalk(inputs),
// duplexSamples(inputs), uncontendedDurations(inputs), latencySamples(inputs), launchGaps(inputs), deviceUnions(inputs),
// opResources(inputs), keepFreedMemory(), mapOwnBlocks(on), prefaultHeap(bytes), mapFile(path, views),
// writeFileDirect(path, pieces, length), demangle(names),
// appendTablePages(output, tables); and, for the drift tests, the vocabularies the TypeScript side repeats:
// timelineColumns, traceCodes, ingestStatements, ingestSchemaVersion.
#include <napi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include <exception>
#include <functional>
#include <optional>
#include <thread>
#include <utility>

#include "call_index.h"
#include "cupti_info.h"
#include "demangle.h"
#include "dense_indices.h"
#include "device_inventory.h"
#include "device_unions.h"
#include "duplex_work.h"
#include "file_map.h"
#include "graph_capture.h"
#include "ingest.h"
#include "ingest_binding.h"
#include "ingest_statements.h"
#include "insert_ceiling.h"
#include "issue_walk.h"
#include "js_error.h"
#include "latency_samples.h"
#include "launch_gaps.h"
#include "memory_policy.h"
#include "op_resources.h"
#include "page_merge.h"
#include "replay_scheduler.h"
#include "sqlite_db.h"
#include "table_loader.h"
#include "trace_codes.h"
#include "trace_import.h"

namespace streamscope::addon {

// Every native error as a JS Error (js_error.h), said here and nowhere else:
// its message, and where a caller tells it apart by more than the message,
//   MalformedRowError (a row the load refuses, row_rules.h): code
//     'STREAMSCOPE_MALFORMED_ROW', `file` and `problem` (profiler/store/
//     row-checks.ts makes it the file's RecordingFileError);
//   PageMergeUnsupported: code 'PAGE_MERGE_UNSUPPORTED' (profiler/merge/
//     merge.ts then merges through SQLite);
//   a SqliteError whose code JS reads (the importer's output, sqlite_db.h):
//     code 'SQLITE_FULL', 'SQLITE_IOERR' or 'SQLITE_ERROR' (profiler/import
//     says a full disk as a failed write of the output).
// Anything else (IngestError, LoadError, the other SqliteErrors, ...): the
// message alone, which names the file.
Napi::Error jsError(Napi::Env env, const std::exception& e) {
  Napi::Error err = Napi::Error::New(env, e.what());
  if (const auto* row = dynamic_cast<const MalformedRowError*>(&e)) {
    err.Set("code", Napi::String::New(env, "STREAMSCOPE_MALFORMED_ROW"));
    err.Set("file", Napi::String::New(env, row->path()));
    err.Set("problem", Napi::String::New(env, row->problem()));
  } else if (dynamic_cast<const PageMergeUnsupported*>(&e)) {
    err.Set("code", Napi::String::New(env, "PAGE_MERGE_UNSUPPORTED"));
  } else if (const auto* sql = dynamic_cast<const SqliteError*>(&e); sql && sql->jsCode()) {
    err.Set("code", Napi::String::New(env, sql->jsCode()));
  }
  return err;
}

namespace {

// The JS function of F: a native error it throws becomes jsError's JS Error.
template <Napi::Value (*F)(const Napi::CallbackInfo&)>
Napi::Value exported(const Napi::CallbackInfo& info) {
  return withJsErrors(info.Env(), [&] { return F(info); });
}

Napi::Value devices(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const Inventory inv = queryDevices(info.Length() > 0 && info[0].IsBoolean() && info[0].As<Napi::Boolean>().Value());
  Napi::Object out = Napi::Object::New(env);
  out.Set("driverVersion", inv.driver_version ? Napi::Number::New(env, *inv.driver_version) : env.Null());
  Napi::Array list = Napi::Array::New(env, inv.devices.size());
  for (size_t i = 0; i < inv.devices.size(); i++) {
    const GpuInfo& g = inv.devices[i];
    Napi::Object d = Napi::Object::New(env);
    d.Set("ordinal", g.ordinal);
    d.Set("name", g.name);
    d.Set("uuid", g.uuid);
    d.Set("ccMajor", g.cc_major);
    d.Set("ccMinor", g.cc_minor);
    d.Set("smCount", g.sm_count);
    d.Set("totalMemoryBytes", Napi::Number::New(env, static_cast<double>(g.total_memory_bytes)));
    d.Set("asyncEngineCount", g.async_engine_count);
    d.Set("concurrentKernels", g.concurrent_kernels);
    d.Set("pciDomain", g.pci_domain);
    d.Set("pciBus", g.pci_bus);
    d.Set("pciDevice", g.pci_device);
    d.Set("clockKhz", g.clock_khz);
    d.Set("memoryClockKhz", g.memory_clock_khz);
    d.Set("memoryBusWidthBits", g.memory_bus_width_bits);
    d.Set("l2CacheBytes", g.l2_cache_bytes);
    if (g.pcie) {
      Napi::Object p = Napi::Object::New(env);
      p.Set("currentGeneration", g.pcie->current_generation);
      p.Set("currentWidth", g.pcie->current_width);
      p.Set("maxGeneration", g.pcie->max_generation);
      p.Set("maxWidth", g.pcie->max_width);
      d.Set("pcie", p);
    } else {
      d.Set("pcie", env.Null());
    }
    list.Set(static_cast<uint32_t>(i), d);
  }
  out.Set("devices", list);
  out.Set("error", inv.error ? Napi::String::New(env, *inv.error) : env.Null());
  return out;
}

Napi::Value cuptiInfo(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::string path = info.Length() > 0 && info[0].IsString() ? info[0].As<Napi::String>().Utf8Value() : "";
  const CuptiInfo c = queryCupti(path);
  Napi::Object out = Napi::Object::New(env);
  out.Set("path", c.path);
  out.Set("version", c.version ? Napi::Number::New(env, *c.version) : env.Null());
  out.Set("error", c.error ? Napi::String::New(env, *c.error) : env.Null());
  return out;
}

// Typed arrays are created on this (the JS) thread and filled on all cores:
// each column is one gather v[order[i]] of millions of rows, memory-bound
// (a sequential copy where the rows were read in order). The columns' own
// memory handed to V8 as external ArrayBuffers instead was tried: Node
// frees those only once the event loop turns, so synchronous loads one
// after another (the benchmark's) piled up 1.1 GB each.
class Gather {
 public:
  explicit Gather(const Column<uint32_t>& order) : order_(order) {}
  template <class TA, class T>
  TA add(Napi::Env env, const Column<T>& v) {
    TA a = TA::New(env, order_.size());
    T* out = a.Data();
    const Column<uint32_t>* order = &order_;
    jobs_.push_back([out, &v, order] {
      const uint32_t* o = order->data();
      const T* in = v.data();
      for (size_t i = 0, n = order->size(); i < n; i++) out[i] = in[o[i]];
    });
    return a;
  }
  void run() {
    runParallel(jobs_.size(), [&](size_t i) { jobs_[i](); });
  }

 private:
  const Column<uint32_t>& order_;
  std::vector<std::function<void()>> jobs_;
};

// Rows a load left out (row_rules.h) as { rows, first }, or null when none.
Napi::Value leftOutObject(Napi::Env env, const LeftOut& left) {
  if (left.rows == 0) return env.Null();
  Napi::Object o = Napi::Object::New(env);
  o.Set("rows", Napi::Number::New(env, static_cast<double>(left.rows)));
  o.Set("first", Napi::String::New(env, left.first));
  return o;
}

// body(env, path) for a load whose first argument is the recording's path.
template <class F>
Napi::Value withPath(const Napi::CallbackInfo& info, F&& body) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsString()) throw Napi::TypeError::New(env, "expected the recording's path");
  return body(env, info[0].As<Napi::String>().Utf8Value());
}

// The typed array of each element type, and its name (what the addon
// exports in `timelineColumns`).
template <class T>
struct JsArray;
template <>
struct JsArray<uint8_t> {
  using type = Napi::Uint8Array;
  static constexpr const char* name = "Uint8Array";
};
template <>
struct JsArray<int32_t> {
  using type = Napi::Int32Array;
  static constexpr const char* name = "Int32Array";
};
template <>
struct JsArray<uint32_t> {
  using type = Napi::Uint32Array;
  static constexpr const char* name = "Uint32Array";
};
template <>
struct JsArray<double> {
  using type = Napi::Float64Array;
  static constexpr const char* name = "Float64Array";
};

#define STREAMSCOPE_SET_ARRAY(member, js, T) out.Set(js, g.add<JsArray<T>::type>(env, c.member));

Napi::Object opsObject(Napi::Env env, const OpColumns& c) {
  Napi::Object out = Napi::Object::New(env);
  Gather g(c.order);
  out.Set("length", Napi::Number::New(env, static_cast<double>(c.size())));
  STREAMSCOPE_OP_COLUMNS(STREAMSCOPE_SET_ARRAY)
  g.run();
  return out;
}

Napi::Value loadOpsBinding(const Napi::CallbackInfo& info) {
  return withPath(info, [](Napi::Env env, const std::string& path) -> Napi::Value {
    OpColumns c = loadOps(path);
    return opsObject(env, c);
  });
}

Napi::Object callsObject(Napi::Env env, const CallColumns& c) {
  Napi::Object out = Napi::Object::New(env);
  Gather g(c.order);
  out.Set("length", Napi::Number::New(env, static_cast<double>(c.size())));
  STREAMSCOPE_CALL_COLUMNS(STREAMSCOPE_SET_ARRAY)
  g.run();
  return out;
}

#undef STREAMSCOPE_SET_ARRAY

// { ops: { kind: 'Uint8Array', ... }, calls: { ... } }: the column lists,
// for the TypeScript side's drift test.
Napi::Object timelineColumns(Napi::Env env) {
  Napi::Object ops = Napi::Object::New(env), calls = Napi::Object::New(env), out = Napi::Object::New(env);
#define STREAMSCOPE_NAME_TYPE(member, js, T) list.Set(js, JsArray<T>::name);
  {
    Napi::Object& list = ops;
    STREAMSCOPE_OP_COLUMNS(STREAMSCOPE_NAME_TYPE)
  }
  {
    Napi::Object& list = calls;
    STREAMSCOPE_CALL_COLUMNS(STREAMSCOPE_NAME_TYPE)
  }
#undef STREAMSCOPE_NAME_TYPE
  out.Set("ops", ops);
  out.Set("calls", calls);
  return out;
}

// trace_codes.h by name, for the TypeScript side's drift test (test/addon/trace-codes.test.ts).
Napi::Object traceCodes(Napi::Env env) {
  using namespace trace_code;
  Napi::Object o = Napi::Object::New(env);
  const std::pair<const char*, double> codes[] = {{"kernel", kKernel},
                                                  {"memcpy", kMemcpy},
                                                  {"compute", kCompute},
                                                  {"htod", kHtoD},
                                                  {"dtoh", kDtoH},
                                                  {"pageable", kPageable},
                                                  {"waitNone", kWaitNone},
                                                  {"waitOp", kWaitOp},
                                                  {"waitPrefix", kWaitPrefix},
                                                  {"nameOther", kNameOther},
                                                  {"nameDevice", kNameDevice},
                                                  {"nameStream", kNameStream},
                                                  {"nameEvent", kNameEvent},
                                                  {"nameImplicit", kNameImplicit},
                                                  {"noShare", kNoShare}};
  for (const auto& [name, value] : codes) o.Set(name, value);
  return o;
}

Napi::Value loadCallsBinding(const Napi::CallbackInfo& info) {
  return withPath(info, [](Napi::Env env, const std::string& path) -> Napi::Value {
    CallColumns c = loadCalls(path);
    return callsObject(env, c);
  });
}

// The typed array type of each column element type.
template <class T>
constexpr napi_typedarray_type typedArrayKind() {
  if constexpr (std::is_same_v<T, uint8_t>) return napi_uint8_array;
  if constexpr (std::is_same_v<T, int32_t>) return napi_int32_array;
  if constexpr (std::is_same_v<T, uint32_t>) return napi_uint32_array;
  return napi_float64_array;
}

// A load's `via` option (table_loader.h LoadVia): 'pages', 'sql', or absent (auto).
LoadVia viaOf(Napi::Env env, const Napi::Value& v) {
  if (v.IsUndefined()) return LoadVia::Auto;
  const std::string s = v.IsString() ? v.As<Napi::String>().Utf8Value() : "";
  if (s == "pages") return LoadVia::Pages;
  if (s == "sql") return LoadVia::Sql;
  if (s == "auto") return LoadVia::Auto;
  throw Napi::TypeError::New(env, "via must be 'auto', 'pages' or 'sql'");
}

// loadRows's request (below) as table_loader.h's RowsRequest.
RowsRequest rowsRequestOf(Napi::Env env, const Napi::Object& req) {
  RowsRequest r;
  const char* tables[] = {"kernels", "memcpys", "memsets", "apiCalls"};
  for (int t = 0; t < 4; t++) {
    const Napi::Value v = req.Get(tables[t]);
    if (v.IsUndefined()) continue;
    if (!v.IsArray()) throw Napi::TypeError::New(env, std::string("loadRows: ") + tables[t] + " must be an array of rowid pairs");
    const Napi::Array a = v.As<Napi::Array>();
    for (uint32_t k = 0; k + 1 < a.Length(); k += 2)
      r.ranges[t].emplace_back(a.Get(k).As<Napi::Number>().Int64Value(), a.Get(k + 1).As<Napi::Number>().Int64Value());
  }
  if (req.Get("pids").IsArray()) {
    const Napi::Array a = req.Get("pids").As<Napi::Array>();
    for (uint32_t k = 0; k < a.Length(); k++) r.pids.push_back(a.Get(k).As<Napi::Number>().Int32Value());
  }
  r.narrow = req.Get("narrow").ToBoolean();
  if (req.Get("maxStart").IsNumber()) r.max_start = req.Get("maxStart").As<Napi::Number>().Int64Value();
  if (req.Get("zones").IsObject()) {
    const Napi::Object z = req.Get("zones").As<Napi::Object>();
    for (int t = 0; t < 4; t++) {
      if (!z.Get(tables[t]).IsArray()) continue;
      const Napi::Array a = z.Get(tables[t]).As<Napi::Array>();
      for (uint32_t k = 0; k < a.Length(); k++) r.zones[t].push_back(a.Get(k).As<Napi::Number>().Int64Value());
    }
  }
  if (req.Get("callNames").IsArray()) {
    const Napi::Array a = req.Get("callNames").As<Napi::Array>();
    for (uint32_t k = 0; k < a.Length(); k++) r.call_names.push_back(a.Get(k).As<Napi::Number>().Int32Value());
  }
  if (req.Get("callMinNs").IsNumber()) r.call_min_ns = req.Get("callMinNs").As<Napi::Number>().Int64Value();
  if (req.Get("threads").IsNumber()) r.threads = static_cast<size_t>(std::max(0, req.Get("threads").As<Napi::Number>().Int32Value()));
  r.via = viaOf(env, req.Get("via"));
  return r;
}

// out.<group>.<js> ({ ops: { <column>: typed array, … }, calls: { … } }: those wanted, the others not written) as
// the typed array of T it must be, or nullopt where it is not asked for; one of another type throws, naming it
// (`what`: the call).
template <class T>
std::optional<typename JsArray<T>::type> outArray(Napi::Env env, const char* what, const Napi::Value& group, const char* js) {
  if (!group.IsObject()) return std::nullopt;
  const Napi::Value v = group.As<Napi::Object>().Get(js);
  if (v.IsUndefined()) return std::nullopt;
  if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != typedArrayKind<T>())
    throw Napi::TypeError::New(env, std::string(what) + ": out." + js + " must be a " + JsArray<T>::name);
  return v.As<typename JsArray<T>::type>();
}

// Each array of `out` lent to the load (table_loader.h Lend): the rows are read into it and put in order there.
// `fresh`: the arrays are memory the process has not touched yet (loadSharedTimelineColumns's), which the load
// writes whole: backed by huge pages (memory_policy.cc adviseHugePages).
Lend lendOut(Napi::Env env, const char* what, const Napi::Object& out, bool fresh = false) {
  std::vector<std::function<void(Timeline&)>> lends;
  auto lend = [&](const Napi::Value& group, const char* js, auto column_of) {
    using T = typename std::decay_t<decltype(column_of(std::declval<Timeline&>()))>::value_type;
    auto a = outArray<T>(env, what, group, js);
    if (!a) return;
    T* data = a->Data();
    const size_t capacity = a->ElementLength();
    if (fresh) adviseHugePages(data, capacity * sizeof(T));
    lends.push_back([column_of, data, capacity](Timeline& t) { column_of(t).borrow(data, capacity); });
  };
  const Napi::Value ops = out.Get("ops"), calls = out.Get("calls");
#define STREAMSCOPE_LEND_OP(member, js, T) lend(ops, js, [](Timeline& t) -> Column<T>& { return t.ops.member; });
#define STREAMSCOPE_LEND_CALL(member, js, T) lend(calls, js, [](Timeline& t) -> Column<T>& { return t.calls.member; });
  STREAMSCOPE_OP_COLUMNS(STREAMSCOPE_LEND_OP)
  STREAMSCOPE_CALL_COLUMNS(STREAMSCOPE_LEND_CALL)
#undef STREAMSCOPE_LEND_OP
#undef STREAMSCOPE_LEND_CALL
  return [lends = std::move(lends)](Timeline& t) {
    for (const auto& l : lends) l(t);
  };
}

// Each column of `out` filled from the load `t`: nothing to do for one the load read into it (lendOut; in order
// already), one gather out[i] = staged[order[i]] for one it read into memory of its own (the rows did not fit), on
// `threads` (0: every core). An array too short throws, naming it (`what`: the call).
void gatherInto(Napi::Env env, const char* what, const Napi::Object& out, const Timeline& t, size_t threads) {
  std::vector<std::function<void()>> jobs;
  auto into = [&](const Napi::Value& group, const char* js, const auto& column, const Column<uint32_t>& order) {
    using T = typename std::decay_t<decltype(column)>::value_type;
    auto a = outArray<T>(env, what, group, js);
    if (!a) return;
    if (a->ElementLength() < order.size()) throw Napi::RangeError::New(env, std::string(what) + ": out." + js + " is too short");
    T* dst = a->Data();
    const T* src = column.data();
    if (dst == src) return;
    const Column<uint32_t>* o = &order;
    jobs.push_back([dst, src, o] {
      const uint32_t* idx = o->data();
      for (size_t i = 0, n = o->size(); i < n; i++) dst[i] = src[idx[i]];
    });
  };
  const Napi::Value ops = out.Get("ops"), calls = out.Get("calls");
#define STREAMSCOPE_INTO_OP(member, js, T) into(ops, js, t.ops.member, t.ops.order);
#define STREAMSCOPE_INTO_CALL(member, js, T) into(calls, js, t.calls.member, t.calls.order);
  STREAMSCOPE_OP_COLUMNS(STREAMSCOPE_INTO_OP)
  STREAMSCOPE_CALL_COLUMNS(STREAMSCOPE_INTO_CALL)
#undef STREAMSCOPE_INTO_OP
#undef STREAMSCOPE_INTO_CALL
  const auto g0 = std::chrono::steady_clock::now();
  runParallel(
      jobs.size(), [&](size_t i) { jobs[i](); }, threads);
  if (std::getenv("STREAMSCOPE_LOAD_TIMING"))
    std::fprintf(stderr, "%s gather   %7.1f ms\n", what,
                 std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - g0).count());
}

// The counts of a load whose columns went into the caller's arrays (gatherInto): { ops, calls, via, leftOut }.
Napi::Object loadCounts(Napi::Env env, const Timeline& t) {
  Napi::Object n = Napi::Object::New(env);
  n.Set("ops", Napi::Number::New(env, static_cast<double>(t.ops.size())));
  n.Set("calls", Napi::Number::New(env, static_cast<double>(t.calls.size())));
  n.Set("via", Napi::String::New(env, t.via));
  n.Set("leftOut", leftOutObject(env, t.left_out));
  return n;
}

// loadRows(path, request, out): some rows of a recording (table_loader.h
// RowsRequest) written, in order, into the typed arrays the caller holds,
// so that one rank after another reuses the same memory.
//   request: { kernels, memcpys, memsets, apiCalls: [lo, hi, lo, hi, …] (inclusive rowids),
//              pids?: number[], narrow?: boolean, threads?: number, maxStart?: number,
//              zones?: { kernels?, memcpys?, memsets?, apiCalls?: [lane, first, last, …] },
//              callNames?: number[], callMinNs?: number, via?: 'auto' | 'pages' | 'sql' }
//   out:     { ops: { <column>: typed array, … }, calls: { … } }: the columns wanted (others are not
//            written), each at least as long as the ranges' rowids
// Returns { ops, calls, via }: the rows written, and how they were read (Timeline::via).
Napi::Value loadRowsBinding(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 3 || !info[0].IsString() || !info[1].IsObject() || !info[2].IsObject())
    throw Napi::TypeError::New(env, "expected (path, request, out)");
  const RowsRequest r = rowsRequestOf(env, info[1].As<Napi::Object>());
  const Napi::Object out = info[2].As<Napi::Object>();
  Timeline& t = loadRows(info[0].As<Napi::String>().Utf8Value(), r, lendOut(env, "loadRows", out));
  gatherInto(env, "loadRows", out, t, r.threads);
  return loadCounts(env, t);
}

// A one-element Int32Array the load adds its rows read to, or null. Its
// memory is a SharedArrayBuffer's where another thread is to read it while
// the load runs (the analysis's progress); the array is held by the caller
// for the length of the call.
int32_t* progressOf(Napi::Env env, const Napi::Value& v) {
  if (v.IsUndefined()) return nullptr;
  if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_int32_array || v.As<Napi::TypedArray>().ElementLength() < 1)
    throw Napi::TypeError::New(env, "progress must be an Int32Array of at least one element");
  napi_typedarray_type type;
  size_t length = 0, offset = 0;
  void* data = nullptr;
  napi_value buffer;
  NAPI_THROW_IF_FAILED(env, napi_get_typedarray_info(env, v, &type, &length, &data, &buffer, &offset), nullptr);
  return static_cast<int32_t*>(data);
}

// Both at once (table_loader.cc reads every table on all cores); loadTimeline(path, { via, progress, out }?): with
// `out` (loadRows's), the columns are written into the caller's arrays and the counts returned, as loadRows does.
Napi::Value loadTimelineBinding(const Napi::CallbackInfo& info) {
  return withPath(info, [&info](Napi::Env env, const std::string& path) -> Napi::Value {
    const bool options = info.Length() > 1 && info[1].IsObject();
    const LoadVia via = options ? viaOf(env, info[1].As<Napi::Object>().Get("via")) : LoadVia::Auto;
    int32_t* progress = options ? progressOf(env, info[1].As<Napi::Object>().Get("progress")) : nullptr;
    // Into the caller's arrays (SharedArrayBuffers' where another thread is to read the columns too): the counts only.
    const Napi::Value into = options ? info[1].As<Napi::Object>().Get("out") : env.Undefined();
    if (into.IsObject()) {
      Timeline t = loadTimeline(path, true, true, via, progress, lendOut(env, "loadTimeline", into.As<Napi::Object>(), true));
      gatherInto(env, "loadTimeline", into.As<Napi::Object>(), t, 0);
      return loadCounts(env, t);
    }
    Timeline t = loadTimeline(path, true, true, via, progress);
    const auto t0 = std::chrono::steady_clock::now();
    Napi::Object out = Napi::Object::New(env);
    out.Set("ops", opsObject(env, t.ops));
    out.Set("calls", callsObject(env, t.calls));
    out.Set("via", Napi::String::New(env, t.via));
    out.Set("leftOut", leftOutObject(env, t.left_out));
    if (std::getenv("STREAMSCOPE_LOAD_TIMING"))
      std::fprintf(stderr, "load gather   %7.0f ms\n",
                   std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    return out;
  });
}

// checkTimeline(path): the load's checks of every row (row_rules.h), no
// column kept → { leftOut: { rows, first } | null }; throws for a row refused.
Napi::Value checkTimelineBinding(const Napi::CallbackInfo& info) {
  return withPath(info, [](Napi::Env env, const std::string& path) -> Napi::Value {
    const LeftOut left = checkTimeline(path);
    Napi::Object out = Napi::Object::New(env);
    out.Set("leftOut", leftOutObject(env, left));
    return out;
  });
}

// One call for a whole list: the schema migration demangles every stored
// name of a recording at once, and a call across Node-API costs more than
// demangling a short name.
// appendTablePages(output, tables): page_merge.h. tables: [{name, root, inputs: [{file, root, rowidAdd, columns:
// [{kind: 'keep' | 'add' | 'map', add, pairs: [old, new, old, new, …], keepOthers}]}]}] → {rows: [[{rows,
// firstRowid, lastRowid}]], pages, threads}. A file it cannot merge as pages throws an Error whose code is
// 'PAGE_MERGE_UNSUPPORTED'.
Napi::Value appendTablePagesBinding(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsString() || !info[1].IsArray()) throw Napi::TypeError::New(env, "expected (output, tables)");
  auto num = [&](Napi::Object o, const char* key) -> int64_t {
    const Napi::Value v = o.Get(key);
    if (!v.IsNumber()) throw Napi::TypeError::New(env, std::string("expected a number for ") + key);
    return v.As<Napi::Number>().Int64Value();
  };
  std::vector<PageMergeTable> tables;
  const Napi::Array ts = info[1].As<Napi::Array>();
  for (uint32_t t = 0; t < ts.Length(); t++) {
    const Napi::Object to = ts.Get(t).As<Napi::Object>();
    PageMergeTable table;
    table.name = to.Get("name").As<Napi::String>().Utf8Value();
    table.root = uint32_t(num(to, "root"));
    const Napi::Array ins = to.Get("inputs").As<Napi::Array>();
    for (uint32_t i = 0; i < ins.Length(); i++) {
      const Napi::Object io = ins.Get(i).As<Napi::Object>();
      PageMergeInput in;
      in.file = io.Get("file").As<Napi::String>().Utf8Value();
      in.root = uint32_t(num(io, "root"));
      in.rowidAdd = num(io, "rowidAdd");
      const Napi::Array cols = io.Get("columns").As<Napi::Array>();
      for (uint32_t c = 0; c < cols.Length(); c++) {
        const Napi::Object co = cols.Get(c).As<Napi::Object>();
        const std::string kind = co.Get("kind").As<Napi::String>().Utf8Value();
        ColumnOp op;
        if (kind == "keep") {
          op.kind = ColumnOp::Keep;
        } else if (kind == "add") {
          op.kind = ColumnOp::Add;
          op.add = num(co, "add");
        } else if (kind == "map") {
          op.kind = ColumnOp::Map;
          op.keepOthers = co.Get("keepOthers").ToBoolean();
          const Napi::Array pairs = co.Get("pairs").As<Napi::Array>();
          for (uint32_t k = 0; k + 1 < pairs.Length(); k += 2)
            op.pairs.emplace_back(pairs.Get(k).As<Napi::Number>().Int64Value(), pairs.Get(k + 1).As<Napi::Number>().Int64Value());
        } else {
          throw Napi::TypeError::New(env, "unknown column operation " + kind);
        }
        in.columns.push_back(std::move(op));
      }
      table.inputs.push_back(std::move(in));
    }
    tables.push_back(std::move(table));
  }
  const PageMergeResult r = appendTablePages(info[0].As<Napi::String>().Utf8Value(), tables);
  Napi::Object out = Napi::Object::New(env);
  Napi::Array rows = Napi::Array::New(env, r.rows.size());
  for (size_t t = 0; t < r.rows.size(); t++) {
    Napi::Array per = Napi::Array::New(env, r.rows[t].size());
    for (size_t i = 0; i < r.rows[t].size(); i++) {
      Napi::Object o = Napi::Object::New(env);
      o.Set("rows", Napi::Number::New(env, double(r.rows[t][i].rows)));
      o.Set("firstRowid", Napi::Number::New(env, double(r.rows[t][i].firstRowid)));
      o.Set("lastRowid", Napi::Number::New(env, double(r.rows[t][i].lastRowid)));
      per.Set(uint32_t(i), o);
    }
    rows.Set(uint32_t(t), per);
  }
  out.Set("rows", rows);
  out.Set("pages", Napi::Number::New(env, r.pagesWritten));
  out.Set("threads", Napi::Number::New(env, r.threads));
  return out;
}

Napi::Value demangleBinding(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsArray()) throw Napi::TypeError::New(env, "demangle expects an array of strings");
  const Napi::Array names = info[0].As<Napi::Array>();
  Napi::Array out = Napi::Array::New(env, names.Length());
  for (uint32_t i = 0; i < names.Length(); i++) {
    const Napi::Value v = names.Get(i);
    if (!v.IsString())
      throw Napi::TypeError::New(env, "demangle expects an array of strings (entry " + std::to_string(i) + " is not a string)");
    const std::optional<std::string> d = demangle(v.As<Napi::String>().Utf8Value());
    out.Set(i, d ? Napi::String::New(env, *d) : env.Null());
  }
  return out;
}

// [{ name, sql, table, columns }]: every statement the ingest prepares,
// for the test that holds them to the schema migrations.
Napi::Array ingestStatements(Napi::Env env) {
  const std::vector<StatementSpec> specs = statementSpecs();
  Napi::Array out = Napi::Array::New(env, specs.size());
  for (size_t i = 0; i < specs.size(); i++) {
    Napi::Object o = Napi::Object::New(env);
    o.Set("name", specs[i].name);
    o.Set("sql", specs[i].sql);
    o.Set("table", specs[i].table.empty() ? env.Null() : Napi::String::New(env, specs[i].table));
    Napi::Array columns = Napi::Array::New(env, specs[i].columns.size());
    for (size_t c = 0; c < specs[i].columns.size(); c++) columns.Set(static_cast<uint32_t>(c), specs[i].columns[c]);
    o.Set("columns", columns);
    out.Set(static_cast<uint32_t>(i), o);
  }
  return out;
}

}  // namespace
}  // namespace streamscope::addon

static Napi::Object InitStreamScopeAddon(Napi::Env env, Napi::Object exports) {
  using namespace streamscope::addon;
  // Functions go through exported<>, so that their native errors reach JS as jsError says; the classes' methods run
  // their bodies through withJsErrors (js_error.h).
  exports.Set("devices", Napi::Function::New(env, exported<devices>, "devices"));
  exports.Set("cuptiInfo", Napi::Function::New(env, exported<cuptiInfo>, "cuptiInfo"));
  initIngest(env, exports);
  exports.Set("importKinetoTrace", Napi::Function::New(env, exported<importKinetoTrace>, "importKinetoTrace"));
  exports.Set("scanTraceEvents", Napi::Function::New(env, exported<scanTraceEvents>, "scanTraceEvents"));
  initInsertCeiling(env, exports);  // the ingest benchmark's ceiling (bench only)
  exports.Set("loadRows", Napi::Function::New(env, exported<loadRowsBinding>, "loadRows"));
  exports.Set("indexCalls", Napi::Function::New(env, exported<indexCallsBinding>, "indexCalls"));
  exports.Set("outermostCalls", Napi::Function::New(env, exported<outermostCallsBinding>, "outermostCalls"));
  exports.Set("replaySchedule", Napi::Function::New(env, exported<replayScheduleBinding>, "replaySchedule"));
  exports.Set("captureGraphs", Napi::Function::New(env, exported<captureGraphsBinding>, "captureGraphs"));
  exports.Set("issueWalk", Napi::Function::New(env, exported<issueWalkBinding>, "issueWalk"));
  exports.Set("duplexSamples", Napi::Function::New(env, exported<duplexSamplesBinding>, "duplexSamples"));
  exports.Set("uncontendedDurations", Napi::Function::New(env, exported<uncontendedDurationsBinding>, "uncontendedDurations"));
  exports.Set("latencySamples", Napi::Function::New(env, exported<latencySamplesBinding>, "latencySamples"));
  exports.Set("denseIndices", Napi::Function::New(env, exported<denseIndicesBinding>, "denseIndices"));
  exports.Set("opResources", Napi::Function::New(env, exported<opResourcesBinding>, "opResources"));
  exports.Set("launchGaps", Napi::Function::New(env, exported<launchGapsBinding>, "launchGaps"));
  exports.Set("deviceUnions", Napi::Function::New(env, exported<deviceUnionsBinding>, "deviceUnions"));
  exports.Set("keepFreedMemory", Napi::Function::New(env, exported<keepFreedMemoryBinding>, "keepFreedMemory"));
  exports.Set("mapOwnBlocks", Napi::Function::New(env, exported<mapOwnBlocksBinding>, "mapOwnBlocks"));
  exports.Set("mapFile", Napi::Function::New(env, exported<mapFileBinding>, "mapFile"));
  exports.Set("writeFileDirect", Napi::Function::New(env, exported<writeFileDirectBinding>, "writeFileDirect"));
  exports.Set("prefaultHeap", Napi::Function::New(env, exported<prefaultHeapBinding>, "prefaultHeap"));
  exports.Set("loadOps", Napi::Function::New(env, exported<loadOpsBinding>, "loadOps"));
  exports.Set("loadCalls", Napi::Function::New(env, exported<loadCallsBinding>, "loadCalls"));
  exports.Set("loadTimeline", Napi::Function::New(env, exported<loadTimelineBinding>, "loadTimeline"));
  exports.Set("checkTimeline", Napi::Function::New(env, exported<checkTimelineBinding>, "checkTimeline"));
  exports.Set("demangle", Napi::Function::New(env, exported<demangleBinding>, "demangle"));
  exports.Set("appendTablePages", Napi::Function::New(env, exported<appendTablePagesBinding>, "appendTablePages"));
  exports.Set("timelineColumns", timelineColumns(env));
  exports.Set("traceCodes", traceCodes(env));
  exports.Set("ingestStatements", ingestStatements(env));
  exports.Set("ingestSchemaVersion", Napi::Number::New(env, kSchemaVersion));
  return exports;
}

NODE_API_MODULE(streamscope_addon, InitStreamScopeAddon)
