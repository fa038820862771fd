// The few CUDA driver functions the collector calls itself, looked up with
// dlsym in the libcuda.so.1 that the target has already loaded (CUDA loads
// the injection library from inside cuInit, so the driver is there).
// The collector never links libcuda: build machines (CI) have no driver.
//
// Each call made here is itself a driver API call, so CUPTI records it as
// DRIVER activity of the calling thread like any other. The collector keeps
// them few: device attributes once per device (on the writer thread), stream
// flags and priority once per stream.
#pragma once

#include <cstdint>
#include <string>

#include <cuda.h>

namespace streamscope {

struct DeviceInfo {
  std::string name;
  uint8_t uuid[16] = {};
  int cc_major = 0, cc_minor = 0, sm_count = 0, async_engine_count = 0, concurrent_kernels = 0;
  int pci_domain = 0, pci_bus = 0, pci_device = 0;
  int core_clock_khz = 0, memory_clock_khz = 0, memory_bus_width_bits = 0, l2_cache_bytes = 0;
  int max_threads_per_sm = 0, max_shared_memory_per_sm = 0, max_registers_per_sm = 0, max_blocks_per_sm = 0;
  uint64_t total_memory_bytes = 0;
};

class DriverApi {
 public:
  // Resolves the functions; loaded() is false when libcuda is not in the
  // process (then every query below fails cleanly).
  DriverApi();
  bool loaded() const { return lib_ != nullptr; }

  int driverVersion() const;  // 0 when unknown
  // `ordinal` is the CUDA device ordinal, as CUPTI reports device ids.
  bool deviceInfo(int ordinal, DeviceInfo* out) const;
  bool streamFlags(CUstream stream, unsigned* flags) const;  // CU_STREAM_* bits
  bool streamPriority(CUstream stream, int* priority) const;

 private:
  void* lib_ = nullptr;
  CUresult (*driverGetVersion_)(int*) = nullptr;
  CUresult (*deviceGet_)(CUdevice*, int) = nullptr;
  CUresult (*deviceGetAttribute_)(int*, CUdevice_attribute, CUdevice) = nullptr;
  CUresult (*deviceGetName_)(char*, int, CUdevice) = nullptr;
  CUresult (*deviceGetUuid_)(CUuuid*, CUdevice) = nullptr;
  CUresult (*deviceTotalMem_)(size_t*, CUdevice) = nullptr;
  CUresult (*streamGetFlags_)(CUstream, unsigned*) = nullptr;
  CUresult (*streamGetPriority_)(CUstream, int*) = nullptr;
};

}  // namespace streamscope
