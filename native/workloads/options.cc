#include "options.h"

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>

#include "check.h"

namespace runner {

const char* const kWorkloads[] = {"normalise", "matmul", "transpose", "launch-loop", nullptr};
const char* const kScenarios[] = {"serial",   "default-stream", "pageable",  "concurrent", "events",
                                  "priority", "sync-each",      "multi-gpu", nullptr};

namespace {

const char* kHelp =
    "streamscope-runner: CUDA workloads under stream scenarios, for checking a profiler against known truth.\n"
    "\n"
    "usage: streamscope-runner --workload W [--scenario S] [--variant V] [--size N] [--iterations N]\n"
    "                          [--chunks N] [--streams N] [--seed N] [--verbose]\n"
    "       streamscope-runner --list | --help\n"
    "\n"
    "workloads (each chunk: H2D copy of its inputs, kernel, D2H copy of its output):\n"
    "  normalise    60 x size float64 arrays, per-column min/max scaling (size default 98450)\n"
    "  matmul       C = A x B, size x size float32, --variant naive|tiled (default tiled; size default 1024)\n"
    "  transpose    size x size float32, --variant naive|tiled|tiled-padded (default tiled-padded; size default 4096)\n"
    "  launch-loop  empty kernels round-robin over --streams streams (default 4), --iterations launches in\n"
    "               total (default 200000); prints 'launch-loop: launches=N ... us_per_launch=U'; ignores --scenario\n"
    "scenarios (default concurrent):\n"
    "  serial          every chunk on one created stream, pinned memory\n"
    "  default-stream  copies on a created stream per chunk, kernels on the legacy default stream\n"
    "  pageable        as concurrent, but host buffers from malloc (pageable)\n"
    "  concurrent      pinned memory, one created stream per chunk (--streams N: round-robin over N)\n"
    "  events          copy-in, compute and copy-out streams ordered with cudaEventRecord/cudaStreamWaitEvent\n"
    "  priority        streams of the lowest and the highest priority, chunks alternating between them\n"
    "  sync-each       as concurrent, plus cudaDeviceSynchronize() after each chunk is issued\n"
    "  multi-gpu       chunks round-robin over every device, streams and memory per device\n"
    "options: --chunks N (default 8)  --iterations N (passes over all chunks, default 1)\n"
    "         --streams N (default: one per chunk)  --seed N (input generator, default 1)  --verbose\n"
    "exit codes: 0 ok, 1 wrong result, 2 bad arguments, 3 CUDA error (no GPU included)\n";

[[noreturn]] void bad(const std::string& why) {
  std::fprintf(stderr, "streamscope-runner: %s (see --help)\n", why.c_str());
  std::exit(kExitBadArguments);
}

bool oneOf(const std::string& v, const char* const* list) {
  for (; *list; ++list)
    if (v == *list) return true;
  return false;
}

std::string joined(const char* const* list) {
  std::string s;
  for (; *list; ++list) s += (s.empty() ? "" : ", ") + std::string(*list);
  return s;
}

long long number(const std::string& name, const char* v, long long min, long long max) {
  char* end = nullptr;
  errno = 0;
  const long long n = std::strtoll(v, &end, 10);
  if (end == v || *end != '\0' || errno == ERANGE || n < min || n > max) {
    bad(name + " needs a whole number from " + std::to_string(min) + " to " + std::to_string(max) + ", got '" + v + "'");
  }
  return n;
}

}  // namespace

Options parseOptions(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; i++) {
    const std::string a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) bad(a + " needs a value");
      return argv[++i];
    };
    if (a == "--help" || a == "-h") {
      std::fputs(kHelp, stdout);
      std::exit(kExitOk);
    } else if (a == "--list") {
      std::printf("workloads:");
      for (const char* const* w = kWorkloads; *w; ++w) std::printf(" %s", *w);
      std::printf("\nscenarios:");
      for (const char* const* s = kScenarios; *s; ++s) std::printf(" %s", *s);
      std::printf("\nvariants: matmul=naive,tiled transpose=naive,tiled,tiled-padded\n");
      std::exit(kExitOk);
    } else if (a == "--workload") o.workload = value();
    else if (a == "--scenario") o.scenario = value();
    else if (a == "--variant") o.variant = value();
    else if (a == "--size") o.size = static_cast<long>(number(a, value(), 1, INT_MAX));
    else if (a == "--iterations") o.iterations = static_cast<long>(number(a, value(), 1, 1000000000000LL));
    else if (a == "--chunks") o.chunks = static_cast<int>(number(a, value(), 1, 4096));
    else if (a == "--streams") o.streams = static_cast<int>(number(a, value(), 1, 1024));
    else if (a == "--seed") o.seed = static_cast<unsigned>(number(a, value(), 0, UINT_MAX));
    else if (a == "--verbose") o.verbose = true;
    else bad("unknown option '" + a + "'");
  }
  if (o.workload.empty()) bad("--workload is required");
  if (!oneOf(o.workload, kWorkloads)) bad("unknown workload '" + o.workload + "' (one of: " + joined(kWorkloads) + ")");
  if (o.scenario.empty()) o.scenario = "concurrent";
  if (!oneOf(o.scenario, kScenarios)) bad("unknown scenario '" + o.scenario + "' (one of: " + joined(kScenarios) + ")");
  if (o.workload == "matmul" && !o.variant.empty() && o.variant != "naive" && o.variant != "tiled") {
    bad("unknown matmul variant '" + o.variant + "' (one of: naive, tiled)");
  }
  if (o.workload == "transpose" && !o.variant.empty() && o.variant != "naive" && o.variant != "tiled" && o.variant != "tiled-padded") {
    bad("unknown transpose variant '" + o.variant + "' (one of: naive, tiled, tiled-padded)");
  }
  if ((o.workload == "normalise" || o.workload == "launch-loop") && !o.variant.empty()) bad(o.workload + " has no variants");
  // The kernels index with 32-bit ints: keep every element index below 2^31.
  if (o.workload == "normalise" && o.size > INT_MAX / 60) bad("normalise --size at most " + std::to_string(INT_MAX / 60));
  if ((o.workload == "matmul" || o.workload == "transpose") && o.size > 46340) bad(o.workload + " --size at most 46340");
  // Chunked workloads: --iterations repeats the whole set of chunks.
  if (o.workload != "launch-loop" && o.iterations > 100000) bad("--iterations at most 100000 for " + o.workload);
  return o;
}

}  // namespace runner
