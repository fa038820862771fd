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
//
// Once CUPTI has filled NVTX's function table, the domain-API entries are
// wrapped: CUPTI records nothing for calls on the default domain (a null
// domain handle; nvtx_default_domain.h), so the wrappers pass every call on
// to CUPTI and report the default-domain ones to the collector too.
//
// NVTX's payload extension (nvtx3/nvToolsExtPayload.h: schemas, enums and
// the payloads NCCL attaches to its collectives' ranges) is loaded apart
// from the core: on its first call NVTX dlopens the same injection library
// and looks up InitializeInjectionNvtxExtension (nvtxExtInit.h). Without it
// the extension is disabled and every schema registration is dropped; with
// it handed on to CUPTI, CUPTI keeps the registrations and delivers each
// payload in a MARKER_DATA record (nvtx_payload.h).
#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cupti.h>
#include <generated_nvtx_meta.h>

#include "cupti_copy.h"
#include "nvtx_default_domain.h"

namespace {

// NVTX's own typedef (nvtx3/nvtxDetail/nvtxTypes.h).
using NvtxGetExportTable = const void* (*)(uint32_t export_table_id);
using InitializeNvtx = int (*)(NvtxGetExportTable);
// CUPTI's handler of NVTX extension modules (CUPTI's documentation, "CUPTI
// NVTX Extended Payload Support"; declared in no header). Its argument is
// NVTX's nvtxExtModuleInfo_t* (nvtxExtTypes.h), passed through untouched.
using InitializeNvtxExtension = CUptiResult(CUPTIAPI*)(void* module_info);

// Set while a wrapper of this thread runs: a chain that calls back into
// NVTX's table (another tool's trampoline) ends here instead of recursing.
thread_local bool in_wrapper = false;
struct Reentry {
  bool outer;
  Reentry() : outer(!in_wrapper) { in_wrapper = true; }
  ~Reentry() {
    if (outer) in_wrapper = false;
  }
};

bool verbose() {
  const char* v = std::getenv("STREAMSCOPE_LOG");
  return v && std::strcmp(v, "1") == 0;
}

// CUPTI's implementations of the wrapped entries. Each copy of NVTX in the
// process initialises once and gets CUPTI's (process-wide) functions in its
// table; they are the same for every copy. Written at initialisation,
// before NVTX calls through the wrappers; read on every call.
std::atomic<nvtxDomainMarkEx_impl_fntype> cupti_mark{nullptr};
std::atomic<nvtxDomainRangeStartEx_impl_fntype> cupti_start{nullptr};
std::atomic<nvtxDomainRangeEnd_impl_fntype> cupti_end{nullptr};
std::atomic<nvtxDomainRangePushEx_impl_fntype> cupti_push{nullptr};
std::atomic<nvtxDomainRangePop_impl_fntype> cupti_pop{nullptr};
std::atomic<nvtxDomainRegisterStringA_impl_fntype> cupti_register{nullptr};

void NVTX_API markEx(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attributes) {
  const Reentry guard;
  if (!guard.outer) return;
  if (auto f = cupti_mark.load(std::memory_order_acquire)) f(domain, attributes);
  if (domain) return;
  const nvtxDomainMarkEx_params p{domain, {attributes}};
  streamscope::recordDefaultDomainNvtx(CUPTI_CBID_NVTX_nvtxDomainMarkEx, &p, nullptr);
}

nvtxRangeId_t NVTX_API rangeStartEx(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attributes) {
  const Reentry guard;
  if (!guard.outer) return 0;
  auto f = cupti_start.load(std::memory_order_acquire);
  // A range id NVTX's caller hands back to RangeEnd: CUPTI's when it gives one.
  nvtxRangeId_t id = f ? f(domain, attributes) : 0;
  if (!domain) {
    static std::atomic<nvtxRangeId_t> own{1ull << 62};  // ids of our own where CUPTI gave none
    if (id == 0) id = own.fetch_add(1);
    const nvtxDomainRangeStartEx_params p{domain, {attributes}};
    streamscope::recordDefaultDomainNvtx(CUPTI_CBID_NVTX_nvtxDomainRangeStartEx, &p, &id);
  }
  return id;
}

void NVTX_API rangeEnd(nvtxDomainHandle_t domain, nvtxRangeId_t id) {
  const Reentry guard;
  if (!guard.outer) return;
  if (auto f = cupti_end.load(std::memory_order_acquire)) f(domain, id);
  const nvtxDomainRangeEnd_params p{domain, {id}};
  streamscope::recordDefaultDomainNvtx(CUPTI_CBID_NVTX_nvtxDomainRangeEnd, &p, nullptr);
}

int NVTX_API rangePushEx(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attributes) {
  const Reentry guard;
  if (!guard.outer) return 0;
  auto f = cupti_push.load(std::memory_order_acquire);
  const int depth = f ? f(domain, attributes) : 0;
  if (!domain) {
    const nvtxDomainRangePushEx_params p{domain, {attributes}};
    streamscope::recordDefaultDomainNvtx(CUPTI_CBID_NVTX_nvtxDomainRangePushEx, &p, nullptr);
  }
  return depth;
}

int NVTX_API rangePop(nvtxDomainHandle_t domain) {
  const Reentry guard;
  if (!guard.outer) return 0;
  auto f = cupti_pop.load(std::memory_order_acquire);
  const int depth = f ? f(domain) : 0;
  if (!domain) {
    const nvtxDomainRangePop_params p{domain};
    streamscope::recordDefaultDomainNvtx(CUPTI_CBID_NVTX_nvtxDomainRangePop, &p, nullptr);
  }
  return depth;
}

nvtxStringHandle_t NVTX_API registerStringA(nvtxDomainHandle_t domain, const char* text) {
  const Reentry guard;
  if (!guard.outer) return nullptr;
  auto f = cupti_register.load(std::memory_order_acquire);
  // A tool that registers nothing may return any non-null handle; the text is what we keep.
  nvtxStringHandle_t handle = f ? f(domain, text) : nullptr;
  if (!domain) {
    if (!handle) handle = reinterpret_cast<nvtxStringHandle_t>(const_cast<char*>(text));
    const nvtxDomainRegisterStringA_params p{domain, text};
    streamscope::recordDefaultDomainNvtx(CUPTI_CBID_NVTX_nvtxDomainRegisterStringA, &p, &handle);
  }
  return handle;
}

// The CUPTI copy NVTX was handed to (its load address): only functions of
// that library are chained to.
const void* cupti_base = nullptr;

// Puts `wrapper` in slot `id` of an NVTX function table, keeping what CUPTI
// put there. A slot CUPTI left as NVTX's own initialisation stub (seen with
// CUPTI 13.0 before any context exists) is not chained to: the stub calls
// through the slot again, i.e. back into the wrapper. A slot holding
// another function than the first copy's (a second tool chained in) is
// left alone.
template <typename Fn>
bool wrap(NvtxFunctionTable table, unsigned size, unsigned id, std::atomic<Fn>& original, Fn wrapper) {
  if (id > size || !table[id]) return false;
  auto current = reinterpret_cast<Fn>(*table[id]);
  if (current == wrapper) return true;  // this copy shares a table already wrapped
  Dl_info where{};
  const bool from_cupti = current && dladdr(reinterpret_cast<void*>(current), &where) != 0 && where.dli_fbase == cupti_base;
  if (from_cupti) {
    Fn expected = nullptr;
    if (!original.compare_exchange_strong(expected, current) && expected != current) return false;
  }
  *table[id] = reinterpret_cast<NvtxFunctionPointer>(wrapper);
  return true;
}

void wrapDomainApi(NvtxGetExportTable get_export_table) {
  const auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  NvtxFunctionTable table = nullptr;
  unsigned size = 0;
  if (!callbacks || !callbacks->GetModuleFunctionTable || !callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size) ||
      !table) {
    if (verbose())
      std::fprintf(stderr, "streamscope: NVTX has no domain-API table; default-domain ranges of the domain API not recorded\n");
    return;
  }
  const bool ok = wrap(table, size, NVTX_CBID_CORE2_DomainMarkEx, cupti_mark, &markEx) &
                  wrap(table, size, NVTX_CBID_CORE2_DomainRangeStartEx, cupti_start, &rangeStartEx) &
                  wrap(table, size, NVTX_CBID_CORE2_DomainRangeEnd, cupti_end, &rangeEnd) &
                  wrap(table, size, NVTX_CBID_CORE2_DomainRangePushEx, cupti_push, &rangePushEx) &
                  wrap(table, size, NVTX_CBID_CORE2_DomainRangePop, cupti_pop, &rangePop) &
                  wrap(table, size, NVTX_CBID_CORE2_DomainRegisterStringA, cupti_register, &registerStringA);
  if (!ok && verbose())
    std::fprintf(stderr, "streamscope: NVTX's domain API is handled by another tool too; some default-domain ranges may be missing\n");
}

}  // namespace

// Returns CUPTI's answer (nonzero: NVTX calls go to it), or 0 when CUPTI
// has no NVTX entry point, in which case NVTX turns itself into no-ops and
// the target runs on unrecorded ranges.
extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTable get_export_table) {
  const streamscope::CuptiCopy& cupti = streamscope::boundCupti();
  if (!cupti.path) {
    std::fprintf(stderr, "streamscope: NVTX ranges not recorded: cannot tell which libcupti is loaded\n");
    return 0;
  }
  auto init = reinterpret_cast<InitializeNvtx>(streamscope::cuptiSymbol("InitializeInjectionNvtx2"));
  if (!init) {
    std::fprintf(stderr, "streamscope: NVTX ranges not recorded: %s has no InitializeInjectionNvtx2\n", cupti.path);
    return 0;
  }
  const int ok = init(get_export_table);
  cupti_base = cupti.base;
  if (ok) wrapDomainApi(get_export_table);
  if (verbose()) std::fprintf(stderr, "streamscope: NVTX handed to %s (%s)\n", cupti.path, ok ? "accepted" : "refused");
  return ok;
}

// NVTX calls this once per extension module a copy of NVTX loads (the
// payload extension: NCCL's schemas and payloads). Handed to the same CUPTI
// copy. 0 (CUPTI without NVTX extension support, or refusing the module):
// NVTX disables that module's calls, as it did before StreamScope exported
// this entry point; ranges still arrive, without their payloads.
extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtxExtension(void* module_info) {
  auto init = reinterpret_cast<InitializeNvtxExtension>(streamscope::cuptiSymbol("cuptiNvtxExtensionInitialize"));
  const int ok = init && init(module_info) == CUPTI_SUCCESS ? 1 : 0;
  if (verbose()) {
    std::fprintf(stderr, "streamscope: NVTX extension module %s\n",
                 !init ? "not handled: this CUPTI has no cuptiNvtxExtensionInitialize"
                 : ok  ? "handed to CUPTI"
                       : "refused by CUPTI");
  }
  return ok;
}
