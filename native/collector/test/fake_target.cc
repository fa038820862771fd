// A "CUDA process" for run-fake-cupti-tests.sh: loads the fake driver, then
// the injection library (which gets the fake libcupti through
// LD_LIBRARY_PATH), calls InitializeInjection as cuInit would, and plays a
// scenario through the fake CUPTI: contexts, streams, launches, signals,
// fork, exit.
//
//   fake_target COLLECTOR.so FAKE_LIBCUDA SCENARIO
#include <dlfcn.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda.h>
#include <cupti.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

namespace {

using ResourceFn = void (*)(CUpti_CallbackId, CUcontext, CUstream);
using LaunchesFn = void (*)(uint32_t, int, uint32_t);
using VoidFn = void (*)();

ResourceFn resource;
LaunchesFn launches;
VoidFn profiler_stop;
VoidFn request_extra;

std::atomic<int> handler_calls{0};
void targetHandler(int) { handler_calls++; }  // like Python's: only notes the signal

void sleepMs(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

CUcontext ctx(uintptr_t v) { return reinterpret_cast<CUcontext>(v); }
CUstream stream(uintptr_t v) { return reinterpret_cast<CUstream>(v); }

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "fake_target: %s\n", what);
  std::exit(90);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) fail("usage: fake_target COLLECTOR.so FAKE_LIBCUDA SCENARIO [CLIENT.so]");
  const std::string scenario = argv[3];

  if (scenario == "sigint-handler") signal(SIGINT, targetHandler);
  if (scenario == "sigint-ignored") signal(SIGINT, SIG_IGN);

  if (!dlopen(argv[2], RTLD_NOW | RTLD_GLOBAL)) fail(dlerror());
  void* collector = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!collector) fail(dlerror());
  auto init = reinterpret_cast<int (*)()>(dlsym(collector, "InitializeInjection"));
  if (!init) fail("no InitializeInjection");
  void* cupti = dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);
  if (!cupti) fail("the fake libcupti is not loaded");
  resource = reinterpret_cast<ResourceFn>(dlsym(cupti, "fake_resource"));
  launches = reinterpret_cast<LaunchesFn>(dlsym(cupti, "fake_launches"));
  profiler_stop = reinterpret_cast<VoidFn>(dlsym(cupti, "fake_profiler_stop"));
  request_extra = reinterpret_cast<VoidFn>(dlsym(cupti, "fake_request_extra_buffer"));
  if (!resource || !launches || !profiler_stop || !request_extra) fail("the fake libcupti lacks its test functions");

  if (init() != 1) fail("InitializeInjection did not return 1");
  // Setup refused (another CUPTI client, an old CUPTI): the target runs on.
  if (scenario == "other" || scenario == "old-cupti") return 0;

  // cuInit returns, the target creates a context and two streams.
  resource(CUPTI_CBID_RESOURCE_CU_INIT_FINISHED, nullptr, nullptr);
  resource(CUPTI_CBID_RESOURCE_CONTEXT_CREATED, ctx(1), nullptr);
  resource(CUPTI_CBID_RESOURCE_STREAM_CREATED, ctx(1), stream(13));
  resource(CUPTI_CBID_RESOURCE_STREAM_CREATED, ctx(1), stream(14));

  if (scenario == "cap") {
    launches(1, 10, 13);  // the one buffer allowed is now in use
    request_extra();      // refused: CUPTI would drop records
    return 0;
  }
  launches(1, 20000, 13);

  if (scenario == "inner-client") {
    // argv[4]: the client library (fake_client.cc), loaded as Python loads an extension.
    void* client = argc > 4 ? dlopen(argv[4], RTLD_NOW | RTLD_LOCAL) : nullptr;
    if (!client) fail(argc > 4 ? dlerror() : "inner-client needs the client library");
    auto subscribe = reinterpret_cast<int (*)()>(dlsym(client, "fake_client_subscribe"));
    if (!subscribe) fail("no fake_client_subscribe");
    // Refused as the real CUPTI refuses it: the collector holds the subscription.
    if (subscribe() != CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) fail("the client's subscription was not refused");
    return 0;
  }
  if (scenario == "exit" || scenario == "discard") {
    profiler_stop();
    sleepMs(200);
    launches(20001, 100, 14);
    return 0;  // atexit → the collector's final flush, Dropped, Process, End
  }
  if (scenario == "sigterm-default") {
    raise(SIGTERM);
    sleepMs(3000);
    fail("still alive 3 s after SIGTERM");
  }
  if (scenario == "sigint-handler") {
    raise(SIGINT);
    if (handler_calls != 1) fail("the target's own SIGINT handler was not called at once");
    sleepMs(300);
    return 0;
  }
  if (scenario == "sigint-ignored") {
    raise(SIGINT);
    sleepMs(300);
    return 0;
  }
  if (scenario == "fork") {
    const pid_t child = fork();
    if (child == 0) {
      raise(SIGTERM);  // the child has no writer thread: it must die at once
      sleepMs(2000);
      _exit(91);
    }
    int status = 0;
    waitpid(child, &status, 0);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGTERM) fail("the forked child did not die of SIGTERM");
    const pid_t child2 = fork();
    if (child2 == 0) std::exit(0);  // runs the inherited atexit handler: must leave the parent's file alone
    waitpid(child2, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) fail("the second child did not exit normally");
    return 0;
  }
  if (scenario == "segv" || scenario == "abort") {
    // A crash right after the launches, before any periodic flush (the test
    // runs with a long flush period): only the crash-time flush saves them.
    if (scenario == "abort") std::abort();
    volatile int* null = nullptr;
    *null = 1;
    fail("still alive after a segmentation fault");
  }
  if (scenario == "sigkill") {
    sleepMs(400);  // periodic flushes (STREAMSCOPE_FLUSH_MS=100) deliver the partly filled buffer
    kill(getpid(), SIGKILL);
    sleepMs(3000);
  }
  fail("unknown scenario");
}
