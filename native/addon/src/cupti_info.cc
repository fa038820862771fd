#include "cupti_info.h"

#include <dlfcn.h>

namespace streamscope::addon {

CuptiInfo queryCupti(const std::string& library_path) {
  CuptiInfo info;
  info.path = library_path.empty() ? "libcupti.so.13" : library_path;
  void* lib = dlopen(info.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* why = dlerror();
    info.error = std::string("CUPTI cannot be loaded: ") + (why ? why : info.path);
    return info;
  }
  using GetVersion = int (*)(uint32_t*);
  auto get = reinterpret_cast<GetVersion>(dlsym(lib, "cuptiGetVersion"));
  uint32_t v = 0;
  if (!get || get(&v) != 0) {
    info.error = info.path + " has no working cuptiGetVersion (not CUPTI?)";
    return info;
  }
  info.version = v;
  // Not closed: CUPTI does not support being unloaded and reloaded.
  return info;
}

}  // namespace streamscope::addon
