#include "cupti_copy.h"

#include <dlfcn.h>

#include <cupti.h>

namespace streamscope {

const CuptiCopy& boundCupti() {
  static const CuptiCopy copy = [] {
    CuptiCopy c;
    Dl_info info{};
    // The address this library's call to cuptiGetVersion is bound to lies in that copy.
    if (dladdr(reinterpret_cast<void*>(&cuptiGetVersion), &info) == 0 || !info.dli_fname) return c;
    c.path = info.dli_fname;
    c.base = info.dli_fbase;
    c.handle = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
    return c;
  }();
  return copy;
}

void* cuptiSymbol(const char* name) {
  const CuptiCopy& c = boundCupti();
  return c.handle ? dlsym(c.handle, name) : nullptr;
}

}  // namespace streamscope
