// Module entry: devices(), cuptiInfo(path?), class Ingest, loadOps(path), loadCalls(path).
#include <napi.h>

#include <exception>
#include <thread>


#include "cupti_info.h"
#include "device_inventory.h"
#include "ingest_binding.h"
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

// A JS typed array holding `v` in the order `order` (written in place).
template <class TA, class T>
TA typed(Napi::Env env, const std::vector<T>& v, const std::vector<uint32_t>& order) {
  TA a = TA::New(env, order.size());
  T* out = a.Data();
  for (size_t i = 0; i < order.size(); i++) out[i] = v[order[i]];
  return a;
}

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

Napi::Object opsObject(Napi::Env env, const OpColumns& o) {
    Napi::Object out = Napi::Object::New(env);
    out.Set("length", Napi::Number::New(env, static_cast<double>(o.size())));
    out.Set("kind", typed<Napi::Uint8Array>(env, o.kind, o.order));
    out.Set("rowId", typed<Napi::Float64Array>(env, o.row_id, o.order));
    out.Set("start", typed<Napi::Float64Array>(env, o.start, o.order));
    out.Set("end", typed<Napi::Float64Array>(env, o.end, o.order));
    out.Set("stream", typed<Napi::Int32Array>(env, o.stream, o.order));
    out.Set("device", typed<Napi::Int32Array>(env, o.device, o.order));
    out.Set("bytes", typed<Napi::Float64Array>(env, o.bytes, o.order));
    out.Set("detail", typed<Napi::Int32Array>(env, o.detail, o.order));
    out.Set("copyKind", typed<Napi::Uint8Array>(env, o.copy_kind, o.order));
    out.Set("correlation", typed<Napi::Uint32Array>(env, o.correlation, o.order));
    out.Set("pid", typed<Napi::Int32Array>(env, o.pid, o.order));
    out.Set("isAsync", typed<Napi::Uint8Array>(env, o.is_async, o.order));
    out.Set("blocks", typed<Napi::Float64Array>(env, o.blocks, o.order));
    out.Set("blockThreads", typed<Napi::Int32Array>(env, o.block_threads, o.order));
    out.Set("registers", typed<Napi::Int32Array>(env, o.registers, o.order));
    out.Set("sharedBytes", typed<Napi::Int32Array>(env, o.shared_bytes, o.order));
    return out;
}

Napi::Value loadOpsBinding(const Napi::CallbackInfo& info) {
  return guarded(info, [](Napi::Env env, const std::string& path) -> Napi::Value { return opsObject(env, loadOps(path)); });
}

Napi::Object callsObject(Napi::Env env, const CallColumns& c) {
    Napi::Object out = Napi::Object::New(env);
    out.Set("length", Napi::Number::New(env, static_cast<double>(c.size())));
    out.Set("rowId", typed<Napi::Float64Array>(env, c.row_id, c.order));
    out.Set("start", typed<Napi::Float64Array>(env, c.start, c.order));
    out.Set("end", typed<Napi::Float64Array>(env, c.end, c.order));
    out.Set("pid", typed<Napi::Int32Array>(env, c.pid, c.order));
    out.Set("tid", typed<Napi::Int32Array>(env, c.tid, c.order));
    out.Set("nameId", typed<Napi::Int32Array>(env, c.name_id, c.order));
    out.Set("correlation", typed<Napi::Uint32Array>(env, c.correlation, c.order));
    out.Set("domain", typed<Napi::Uint8Array>(env, c.domain, c.order));
    return out;
}

Napi::Value loadCallsBinding(const Napi::CallbackInfo& info) {
  return guarded(info, [](Napi::Env env, const std::string& path) -> Napi::Value { return callsObject(env, loadCalls(path)); });
}

// Both at once: the API calls are read on a second thread (its own SQLite
// connection) while this one reads the operations — two cores, half the wait.
Napi::Value loadTimelineBinding(const Napi::CallbackInfo& info) {
  return guarded(info, [](Napi::Env env, const std::string& path) -> Napi::Value {
    CallColumns calls;
    std::exception_ptr failed;
    std::thread reader([&] {
      try {
        calls = loadCalls(path);
      } catch (...) {
        failed = std::current_exception();
      }
    });
    OpColumns ops;
    try {
      ops = loadOps(path);
    } catch (...) {
      reader.join();
      throw;
    }
    reader.join();
    if (failed) std::rethrow_exception(failed);
    Napi::Object out = Napi::Object::New(env);
    out.Set("ops", opsObject(env, ops));
    out.Set("calls", callsObject(env, calls));
    return out;
  });
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
  return exports;
}

NODE_API_MODULE(streamscope_addon, InitStreamScopeAddon)
