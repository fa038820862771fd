#include "driver_api.h"

#include <dlfcn.h>

#include <cstring>

namespace streamscope {

template <class F>
static void bind(void* lib, const char* name, F* fn) {
  *fn = reinterpret_cast<F>(dlsym(lib, name));
}

DriverApi::DriverApi() {
  // RTLD_NOLOAD: use the driver the process already has, matched by soname
  // (also when the runtime opened it RTLD_LOCAL); never load a second one.
  // The handle is kept for the life of the process.
  lib_ = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!lib_) return;
  bind(lib_, "cuDriverGetVersion", &driverGetVersion_);
  bind(lib_, "cuDeviceGet", &deviceGet_);
  bind(lib_, "cuDeviceGetAttribute", &deviceGetAttribute_);
  bind(lib_, "cuDeviceGetName", &deviceGetName_);
  // cuda.h maps cuDeviceGetUuid to _v2 and cuDeviceTotalMem to _v2: use
  // the exported names those macros stand for, with the old ones as fallback.
  bind(lib_, "cuDeviceGetUuid_v2", &deviceGetUuid_);
  if (!deviceGetUuid_) bind(lib_, "cuDeviceGetUuid", &deviceGetUuid_);
  bind(lib_, "cuDeviceTotalMem_v2", &deviceTotalMem_);
  bind(lib_, "cuStreamGetFlags", &streamGetFlags_);
  bind(lib_, "cuStreamGetPriority", &streamGetPriority_);
}

int DriverApi::driverVersion() const {
  int v = 0;
  if (driverGetVersion_ && driverGetVersion_(&v) != CUDA_SUCCESS) v = 0;
  return v;
}

bool DriverApi::deviceInfo(int ordinal, DeviceInfo* out) const {
  if (!deviceGet_ || !deviceGetAttribute_) return false;
  CUdevice dev;
  if (deviceGet_(&dev, ordinal) != CUDA_SUCCESS) return false;
  char name[256] = {};
  if (deviceGetName_ && deviceGetName_(name, sizeof name - 1, dev) == CUDA_SUCCESS) out->name = name;
  CUuuid uuid{};
  if (deviceGetUuid_ && deviceGetUuid_(&uuid, dev) == CUDA_SUCCESS) std::memcpy(out->uuid, uuid.bytes, 16);
  size_t mem = 0;
  if (deviceTotalMem_ && deviceTotalMem_(&mem, dev) == CUDA_SUCCESS) out->total_memory_bytes = mem;
  auto attr = [&](CUdevice_attribute a) {
    int v = 0;
    return deviceGetAttribute_(&v, a, dev) == CUDA_SUCCESS ? v : 0;
  };
  out->cc_major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  out->cc_minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  out->sm_count = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  out->async_engine_count = attr(CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT);
  out->concurrent_kernels = attr(CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS);
  out->pci_domain = attr(CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID);
  out->pci_bus = attr(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID);
  out->pci_device = attr(CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID);
  out->core_clock_khz = attr(CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
  out->memory_clock_khz = attr(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
  out->memory_bus_width_bits = attr(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
  out->l2_cache_bytes = attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  out->max_threads_per_sm = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
  out->max_shared_memory_per_sm = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
  out->max_registers_per_sm = attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
  out->max_blocks_per_sm = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
  return true;
}

bool DriverApi::streamFlags(CUstream stream, unsigned* flags) const {
  return streamGetFlags_ && streamGetFlags_(stream, flags) == CUDA_SUCCESS;
}

bool DriverApi::streamPriority(CUstream stream, int* priority) const {
  return streamGetPriority_ && streamGetPriority_(stream, priority) == CUDA_SUCCESS;
}

}  // namespace streamscope
