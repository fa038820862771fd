// libstreamscope_cupti_watch.so: preloaded into the recorded target
// (LD_PRELOAD, set by the recorder next to CUDA_INJECTION64_PATH) so that a
// profiler inside the target (torch.profiler's Kineto, CuPy's or a vendor
// library's CUPTI client) that is refused the process's one CUPTI
// subscription is said, instead of left to that profiler's own warnings.
//
// It defines cuptiSubscribe and cuptiSubscribe_v2 and forwards each to the
// libcupti the caller would have bound to (realFor). Preloaded libraries
// come first in the lookup scope of every object, so every caller's PLT
// entry binds here. When the real call
// answers CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED to a caller other
// than StreamScope's collector (which subscribes first, at cuInit), one line
// goes to $STREAMSCOPE_OUTPUT_DIR/cupti-refused-<pid>.txt: the caller's
// library and subscriber name. The recorder turns it into a note.
//
// No C++ runtime, no libcupti link: it must load into any process before
// anything else, and cost nothing where CUPTI is never used. The
// subscription calls are rare (once per client), so nothing is cached.
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cupti.h>

namespace {

// The collector's subscriber name (injection.cc passes it to cuptiSubscribe_v2).
constexpr const char* kOwnName = "StreamScope";

void noteRefused(const void* caller, const char* name) {
  const char* dir = getenv("STREAMSCOPE_OUTPUT_DIR");
  if (!dir || !*dir) return;
  Dl_info info{};
  const char* library = dladdr(caller, &info) != 0 && info.dli_fname ? info.dli_fname : "an unknown library";
  char path[4096];
  if (snprintf(path, sizeof path, "%s/cupti-refused-%d.txt", dir, static_cast<int>(getpid())) >= static_cast<int>(sizeof path)) return;
  char line[4096 + 512];
  const int n = snprintf(line, sizeof line, "%d\t%s\t%s\n", static_cast<int>(getpid()), library, name && *name ? name : "");
  if (n <= 0) return;
  // O_APPEND: one line per refused call, written whole.
  const int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  const ssize_t written = write(fd, line, static_cast<size_t>(n < static_cast<int>(sizeof line) ? n : sizeof line - 1));
  (void)written;
  close(fd);
}

// The definition the caller would have bound to without us: the first in
// the caller's own dependency tree (dlsym on the caller's handle searches
// the object and its dependencies, not the global scope the preload sits
// in). A profiler inside a Python extension lives in a library loaded
// RTLD_LOCAL, whose libcupti RTLD_NEXT cannot see; two copies of libcupti
// (the toolkit's, a wheel's) each stay with their own callers. RTLD_NEXT
// where the caller is not a library that can be opened again (the main
// program).
template <typename F>
F realFor(const void* caller, const char* symbol, F self) {
  Dl_info info{};
  F found = nullptr;
  if (dladdr(caller, &info) != 0 && info.dli_fname && *info.dli_fname) {
    if (void* handle = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD)) {
      found = reinterpret_cast<F>(dlsym(handle, symbol));
      dlclose(handle);
    }
  }
  if (!found || found == self) found = reinterpret_cast<F>(dlsym(RTLD_NEXT, symbol));
  return found == self ? nullptr : found;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) CUptiResult cuptiSubscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                                                                  void* userdata) {
  using Fn = CUptiResult (*)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*);
  const void* caller = __builtin_return_address(0);
  const Fn real = realFor<Fn>(caller, "cuptiSubscribe", &cuptiSubscribe);
  if (!real) return CUPTI_ERROR_NOT_INITIALIZED;
  const CUptiResult r = real(subscriber, callback, userdata);
  if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) noteRefused(caller, nullptr);
  return r;
}

__attribute__((visibility("default"))) CUptiResult cuptiSubscribe_v2(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                                                                     void* userdata, CUpti_SubscriberParams* params) {
  using Fn = CUptiResult (*)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*, CUpti_SubscriberParams*);
  const void* caller = __builtin_return_address(0);
  const Fn real = realFor<Fn>(caller, "cuptiSubscribe_v2", &cuptiSubscribe_v2);
  if (!real) return CUPTI_ERROR_NOT_INITIALIZED;
  const CUptiResult r = real(subscriber, callback, userdata, params);
  const char* name = params && params->subscriberName ? params->subscriberName : nullptr;
  if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED && !(name && strcmp(name, kOwnName) == 0)) noteRefused(caller, name);
  return r;
}

}  // extern "C"
