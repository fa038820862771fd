// The NVTX injection entry point. The recorder names this library in
// NVTX_INJECTION64_PATH (as well as in CUDA_INJECTION64_PATH); NVTX (v2's
// libnvToolsExt and every copy of the header-only v3 compiled into a
// framework) dlopens it on the first NVTX call of the process and calls
// InitializeInjectionNvtx2. We hand that call on to the CUPTI this library
// is bound to, so that NVTX ranges arrive as MARKER activity in the one
// CUPTI that the collector subscribed to.
//
// Why not name libcupti in NVTX_INJECTION64_PATH, as CUPTI's documentation
// does: a process can hold two copies of CUPTI. PyTorch's wheels link the
// libcupti.so.13 of the `nvidia-cuda-cupti` package; once `import torch`
// has loaded it, the dynamic linker binds this library's DT_NEEDED
// libcupti.so.13 to that copy (matched by soname), while NVTX's dlopen of
// the toolkit's path loads a second copy that nobody subscribed to. Every
// framework range then went to the second copy and was lost. Asking the
// dynamic linker which copy our own CUPTI symbols resolve to makes the
// forwarding right whichever copy that is.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cupti.h>

namespace {

// NVTX's own typedef (nvtx3/nvtxDetail/nvtxTypes.h), restated to keep the
// NVTX headers out of the build.
using NvtxGetExportTable = const void* (*)(uint32_t export_table_id);
using InitializeNvtx = int (*)(NvtxGetExportTable);

bool verbose() {
  const char* v = std::getenv("STREAMSCOPE_LOG");
  return v && std::strcmp(v, "1") == 0;
}

}  // namespace

// Returns CUPTI's answer (nonzero: NVTX calls go to it), or 0 when CUPTI
// has no NVTX entry point, in which case NVTX turns itself into no-ops and
// the target runs on unrecorded ranges.
extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTable get_export_table) {
  Dl_info info{};
  // The address this library's call to cuptiGetVersion is bound to lies in
  // the CUPTI copy the collector uses.
  if (dladdr(reinterpret_cast<void*>(&cuptiGetVersion), &info) == 0 || !info.dli_fname) {
    std::fprintf(stderr, "streamscope: NVTX ranges not recorded: cannot tell which libcupti is loaded\n");
    return 0;
  }
  void* cupti = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
  auto init = cupti ? reinterpret_cast<InitializeNvtx>(dlsym(cupti, "InitializeInjectionNvtx2")) : nullptr;
  if (!init) {
    std::fprintf(stderr, "streamscope: NVTX ranges not recorded: %s has no InitializeInjectionNvtx2\n", info.dli_fname);
    return 0;
  }
  const int ok = init(get_export_table);
  if (verbose()) std::fprintf(stderr, "streamscope: NVTX handed to %s (%s)\n", info.dli_fname, ok ? "accepted" : "refused");
  return ok;
}
