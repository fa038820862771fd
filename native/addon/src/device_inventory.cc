#include "device_inventory.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstring>

namespace streamscope::addon {
namespace {

// The few driver and NVML entry points used, declared here so the addon
// builds without the CUDA toolkit's headers. Their ABI is stable.
using CUresult = int;
using CUdevice = int;
struct CUuuid {
  char bytes[16];
};
// CUdevice_attribute values from cuda.h (stable across CUDA versions).
enum : int {
  kClockRate = 13,
  kMultiprocessorCount = 16,
  kConcurrentKernels = 31,
  kPciBusId = 33,
  kPciDeviceId = 34,
  kMemoryClockRate = 36,
  kGlobalMemoryBusWidth = 37,
  kL2CacheSize = 38,
  kAsyncEngineCount = 40,
  kPciDomainId = 50,
  kComputeCapabilityMajor = 75,
  kComputeCapabilityMinor = 76,
};

using nvmlReturn_t = int;
using nvmlDevice_t = void*;

template <class F>
F sym(void* lib, const char* name) {
  return reinterpret_cast<F>(dlsym(lib, name));
}

std::string cudaError(void* lib, CUresult r) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (auto f = sym<CUresult (*)(CUresult, const char**)>(lib, "cuGetErrorName")) f(r, &name);
  if (auto f = sym<CUresult (*)(CUresult, const char**)>(lib, "cuGetErrorString")) f(r, &text);
  std::string s = name ? name : ("CUDA error " + std::to_string(r));
  if (text) s += std::string(": ") + text;
  return s;
}

// PCIe link through NVML, optional: absent NVML just means no link info.
struct Nvml {
  void* lib = nullptr;
  nvmlReturn_t (*byPciBusId)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*curGen)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*curWidth)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*maxGen)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*maxWidth)(nvmlDevice_t, unsigned*) = nullptr;
  bool ok = false;

  Nvml() {
    lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
    auto init = sym<nvmlReturn_t (*)()>(lib, "nvmlInit_v2");
    byPciBusId = sym<decltype(byPciBusId)>(lib, "nvmlDeviceGetHandleByPciBusId_v2");
    curGen = sym<decltype(curGen)>(lib, "nvmlDeviceGetCurrPcieLinkGeneration");
    curWidth = sym<decltype(curWidth)>(lib, "nvmlDeviceGetCurrPcieLinkWidth");
    maxGen = sym<decltype(maxGen)>(lib, "nvmlDeviceGetMaxPcieLinkGeneration");
    maxWidth = sym<decltype(maxWidth)>(lib, "nvmlDeviceGetMaxPcieLinkWidth");
    ok = init && byPciBusId && curGen && curWidth && maxGen && maxWidth && init() == 0;
  }
  ~Nvml() {
    if (ok)
      if (auto shutdown = sym<nvmlReturn_t (*)()>(lib, "nvmlShutdown")) shutdown();
  }

  std::optional<PcieLink> link(int domain, int bus, int device) const {
    if (!ok) return std::nullopt;
    char id[32];
    std::snprintf(id, sizeof id, "%08x:%02x:%02x.0", domain, bus, device);
    nvmlDevice_t dev = nullptr;
    if (byPciBusId(id, &dev) != 0) return std::nullopt;
    PcieLink l;
    if (curGen(dev, &l.current_generation) != 0 || curWidth(dev, &l.current_width) != 0) return std::nullopt;
    maxGen(dev, &l.max_generation);
    maxWidth(dev, &l.max_width);
    return l;
  }
};

}  // namespace

std::string formatUuid(const uint8_t b[16]) {
  char s[64];
  std::snprintf(s, sizeof s, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2], b[3], b[4], b[5],
                b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return s;
}

Inventory queryDevices(bool driver_only) {
  Inventory inv;
  // Kept loaded for the life of the process: unloading a driver is never worth it.
  // The reason it did not load is kept too: dlerror() tells it once.
  static std::string why;
  static void* lib = [] {
    void* l = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!l) {
      const char* e = dlerror();
      why = e ? e : "not found";
    }
    return l;
  }();
  if (!lib) {
    inv.error = "NVIDIA driver not found (libcuda.so.1: " + why + ")";
    return inv;
  }
  auto cuInit = sym<CUresult (*)(unsigned)>(lib, "cuInit");
  auto cuDriverGetVersion = sym<CUresult (*)(int*)>(lib, "cuDriverGetVersion");
  auto cuDeviceGetCount = sym<CUresult (*)(int*)>(lib, "cuDeviceGetCount");
  auto cuDeviceGet = sym<CUresult (*)(CUdevice*, int)>(lib, "cuDeviceGet");
  auto cuDeviceGetName = sym<CUresult (*)(char*, int, CUdevice)>(lib, "cuDeviceGetName");
  auto cuDeviceGetAttribute = sym<CUresult (*)(int*, int, CUdevice)>(lib, "cuDeviceGetAttribute");
  auto cuDeviceTotalMem = sym<CUresult (*)(size_t*, CUdevice)>(lib, "cuDeviceTotalMem_v2");
  auto cuDeviceGetUuid = sym<CUresult (*)(CUuuid*, CUdevice)>(lib, "cuDeviceGetUuid_v2");
  if (!cuDeviceGetUuid) cuDeviceGetUuid = sym<CUresult (*)(CUuuid*, CUdevice)>(lib, "cuDeviceGetUuid");
  if (!cuInit || !cuDriverGetVersion || !cuDeviceGetCount || !cuDeviceGet || !cuDeviceGetName || !cuDeviceGetAttribute) {
    inv.error = "libcuda.so.1 lacks the CUDA driver API entry points StreamScope needs (driver too old?)";
    return inv;
  }
  int version = 0;
  if (cuDriverGetVersion(&version) == 0) inv.driver_version = version;
  if (driver_only) return inv;
  const CUresult init = cuInit(0);
  if (init != 0) {
    inv.error = "cuInit failed: " + cudaError(lib, init);
    return inv;
  }
  int count = 0;
  if (const CUresult r = cuDeviceGetCount(&count); r != 0) {
    inv.error = "cuDeviceGetCount failed: " + cudaError(lib, r);
    return inv;
  }
  if (count == 0) inv.error = "the NVIDIA driver reports no CUDA devices";
  Nvml nvml;
  for (int i = 0; i < count; i++) {
    CUdevice dev;
    if (cuDeviceGet(&dev, i) != 0) continue;
    GpuInfo g;
    g.ordinal = i;
    char name[256] = {};
    cuDeviceGetName(name, sizeof name - 1, dev);
    g.name = name;
    CUuuid uuid{};
    if (cuDeviceGetUuid && cuDeviceGetUuid(&uuid, dev) == 0) g.uuid = formatUuid(reinterpret_cast<const uint8_t*>(uuid.bytes));
    size_t mem = 0;
    if (cuDeviceTotalMem && cuDeviceTotalMem(&mem, dev) == 0) g.total_memory_bytes = mem;
    auto attr = [&](int a) {
      int v = 0;
      return cuDeviceGetAttribute(&v, a, dev) == 0 ? v : 0;
    };
    g.cc_major = attr(kComputeCapabilityMajor);
    g.cc_minor = attr(kComputeCapabilityMinor);
    g.sm_count = attr(kMultiprocessorCount);
    g.async_engine_count = attr(kAsyncEngineCount);
    g.concurrent_kernels = attr(kConcurrentKernels) != 0;
    g.pci_domain = attr(kPciDomainId);
    g.pci_bus = attr(kPciBusId);
    g.pci_device = attr(kPciDeviceId);
    g.clock_khz = attr(kClockRate);
    g.memory_clock_khz = attr(kMemoryClockRate);
    g.memory_bus_width_bits = attr(kGlobalMemoryBusWidth);
    g.l2_cache_bytes = attr(kL2CacheSize);
    g.pcie = nvml.link(g.pci_domain, g.pci_bus, g.pci_device);
    inv.devices.push_back(std::move(g));
  }
  return inv;
}

}  // namespace streamscope::addon
