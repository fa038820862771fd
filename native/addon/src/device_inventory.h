// GPU inventory through the CUDA driver API and NVML, both opened with
// dlopen: on a machine without a driver the module still loads and answers
// with an empty list and the reason.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace streamscope::addon {

struct PcieLink {
  unsigned current_generation = 0, current_width = 0, max_generation = 0, max_width = 0;
};

struct GpuInfo {
  int ordinal = 0;
  std::string name, uuid;
  int cc_major = 0, cc_minor = 0, sm_count = 0, async_engine_count = 0;
  bool concurrent_kernels = false;
  int pci_domain = 0, pci_bus = 0, pci_device = 0;
  int clock_khz = 0, memory_clock_khz = 0, memory_bus_width_bits = 0, l2_cache_bytes = 0;
  uint64_t total_memory_bytes = 0;
  std::optional<PcieLink> pcie;
};

struct Inventory {
  std::optional<int> driver_version;
  std::vector<GpuInfo> devices;
  std::optional<std::string> error;
};

// driver_only: the driver library and its version, without cuInit or the
// devices (cuInit costs 0.1-0.25 s on the GPU hosts measured: record's
// preflight asks only whether there is a driver at all).
Inventory queryDevices(bool driver_only = false);

// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi prints it.
std::string formatUuid(const uint8_t bytes[16]);

}  // namespace streamscope::addon
