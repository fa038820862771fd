// Module entry: devices(), cuptiInfo(path?), class Ingest.
#include <napi.h>

#include "cupti_info.h"
#include "device_inventory.h"
#include "ingest_binding.h"

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

}  // namespace
}  // namespace streamscope::addon

static Napi::Object InitStreamScopeAddon(Napi::Env env, Napi::Object exports) {
  using namespace streamscope::addon;
  exports.Set("devices", Napi::Function::New(env, devices, "devices"));
  exports.Set("cuptiInfo", Napi::Function::New(env, cuptiInfo, "cuptiInfo"));
  initIngest(env, exports);
  return exports;
}

NODE_API_MODULE(streamscope_addon, InitStreamScopeAddon)
