// A stand-in for libcuda.so.1 with the driver functions the collector looks
// up (driver_api.cc), for run-fake-cupti-tests.sh.
#include <cuda.h>

#include <cstring>

extern "C" {
CUresult CUDAAPI cuDriverGetVersion(int* v) {
  *v = 13000;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGet(CUdevice* d, int ordinal) {
  *d = ordinal;
  return ordinal == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}
CUresult CUDAAPI cuDeviceGetAttribute(int* v, CUdevice_attribute a, CUdevice) {
  *v = 1000 + int(a);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGetName(char* name, int len, CUdevice) {
  std::strncpy(name, "Fake GPU", size_t(len));
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGetUuid_v2(CUuuid* u, CUdevice) {
  for (int i = 0; i < 16; i++) u->bytes[i] = char(i * 16 + i);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceTotalMem_v2(size_t* b, CUdevice) {
  *b = size_t(80) << 30;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuStreamGetFlags(CUstream s, unsigned* f) {
  *f = reinterpret_cast<uintptr_t>(s) == 13 ? CU_STREAM_NON_BLOCKING : 0;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuStreamGetPriority(CUstream s, int* p) {
  *p = reinterpret_cast<uintptr_t>(s) == 13 ? -1 : 0;
  return CUDA_SUCCESS;
}
}
