// Module entry: devices(), cuptiInfo(path?), class Ingest, loadOps(path), loadCalls(path), loadTimeline(path),
// demangle(names); and, for the drift tests, the vocabularies the TypeScript side repeats: timelineColumns,
// ingestStatements, ingestSchemaVersion.
#include <napi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include <exception>
#include <functional>
#include <thread>

#include "cupti_info.h"
#include "demangle.h"
#include "device_inventory.h"
#include "ingest.h"
#include "ingest_binding.h"
#include "ingest_statements.h"
#include "table_loader.h"

namespace streamscope::addon {
namespace {

Napi::Value devices(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const Inventory inv = queryDevices();
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
// each column is one gather v[order[i]] of millions of rows, memory-bound.
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

template <class F>
Napi::Value guarded(const Napi::CallbackInfo& info, F&& body) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsString()) throw Napi::TypeError::New(env, "expected the recording's path");
  try {
    return body(env, info[0].As<Napi::String>().Utf8Value());
  } catch (const LoadError& e) {
    throw Napi::Error::New(env, e.what());
  }
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
  return guarded(info, [](Napi::Env env, const std::string& path) -> Napi::Value { return opsObject(env, loadOps(path)); });
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

Napi::Value loadCallsBinding(const Napi::CallbackInfo& info) {
  return guarded(info, [](Napi::Env env, const std::string& path) -> Napi::Value { return callsObject(env, loadCalls(path)); });
}

// Both at once (table_loader.cc reads every table on all cores).
Napi::Value loadTimelineBinding(const Napi::CallbackInfo& info) {
  return guarded(info, [](Napi::Env env, const std::string& path) -> Napi::Value {
    Timeline t = loadTimeline(path, true, true);
    const auto t0 = std::chrono::steady_clock::now();
    Napi::Object out = Napi::Object::New(env);
    out.Set("ops", opsObject(env, t.ops));
    out.Set("calls", callsObject(env, t.calls));
    if (std::getenv("STREAMSCOPE_LOAD_TIMING"))
      std::fprintf(stderr, "load gather   %7.0f ms\n",
                   std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    return out;
  });
}

// One call for a whole list: the schema migration demangles every stored
// name of a recording at once, and a call across Node-API costs more than
// demangling a short name.
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
  exports.Set("devices", Napi::Function::New(env, devices, "devices"));
  exports.Set("cuptiInfo", Napi::Function::New(env, cuptiInfo, "cuptiInfo"));
  initIngest(env, exports);
  exports.Set("loadOps", Napi::Function::New(env, loadOpsBinding, "loadOps"));
  exports.Set("loadCalls", Napi::Function::New(env, loadCallsBinding, "loadCalls"));
  exports.Set("loadTimeline", Napi::Function::New(env, loadTimelineBinding, "loadTimeline"));
  exports.Set("demangle", Napi::Function::New(env, demangleBinding, "demangle"));
  exports.Set("timelineColumns", timelineColumns(env));
  exports.Set("ingestStatements", ingestStatements(env));
  exports.Set("ingestSchemaVersion", Napi::Number::New(env, kSchemaVersion));
  return exports;
}

NODE_API_MODULE(streamscope_addon, InitStreamScopeAddon)
