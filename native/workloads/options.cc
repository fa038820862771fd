#include "options.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "check.h"

namespace runner {

const char* const kWorkloads[] = {"normalise", "matmul", "transpose", "launch-loop", nullptr};
const char* const kScenarios[] = {"serial", "default-stream", "pageable", "concurrent", "events", "priority", "sync-each", "multi-gpu", nullptr};

namespace {

const char* kHelp =
    "streamscope-runner: CUDA workloads under stream scenarios, for checking a profiler against known truth.\n"
    "\n"
    "usage: streamscope-runner --workload W --scenario S [--variant V] [--size N] [--iterations N]\n"
    "                          [--chunks N] [--streams N] [--seed N] [--verbose]\n"
    "       streamscope-runner --list | --help\n"
    "\n"
    "workloads: normalise (60 x size float64 arrays, per-column min/max scaling; size default 98450)\n"
    "           matmul (size x size float32, --variant naive|tiled; size default 1024)\n"
    "           transpose (size x size float32, --variant naive|tiled|tiled-padded; size default 4096)\n"
    "           launch-loop (empty kernels over --streams streams, --iterations launches; prints us_per_launch)\n"
    "scenarios: serial, default-stream, pageable, concurrent, events, priority, sync-each, multi-gpu\n"
    "exit codes: 0 ok, 1 wrong result, 2 bad arguments, 3 CUDA error\n";

[[noreturn]] void bad(const std::string& why) {
  std::fprintf(stderr, "streamscope-runner: %s (see --help)\n", why.c_str());
  std::exit(kExitBadArguments);
}

bool oneOf(const std::string& v, const char* const* list) {
  for (; *list; ++list) if (v == *list) return true;
  return false;
}

long number(const std::string& name, const char* v, long min) {
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  if (!end || *end != '\0' || n < min) bad(name + " needs a whole number >= " + std::to_string(min) + ", got '" + v + "'");
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
      std::printf("\n");
      std::exit(kExitOk);
    } else if (a == "--workload") o.workload = value();
    else if (a == "--scenario") o.scenario = value();
    else if (a == "--variant") o.variant = value();
    else if (a == "--size") o.size = number(a, value(), 1);
    else if (a == "--iterations") o.iterations = static_cast<int>(number(a, value(), 1));
    else if (a == "--chunks") o.chunks = static_cast<int>(number(a, value(), 1));
    else if (a == "--streams") o.streams = static_cast<int>(number(a, value(), 1));
    else if (a == "--seed") o.seed = static_cast<unsigned>(number(a, value(), 0));
    else if (a == "--verbose") o.verbose = true;
    else bad("unknown option '" + a + "'");
  }
  if (o.workload.empty()) bad("--workload is required");
  if (!oneOf(o.workload, kWorkloads)) bad("unknown workload '" + o.workload + "'");
  if (o.scenario.empty()) o.scenario = "concurrent";
  if (!oneOf(o.scenario, kScenarios)) bad("unknown scenario '" + o.scenario + "'");
  if (o.workload == "matmul" && !o.variant.empty() && o.variant != "naive" && o.variant != "tiled") bad("matmul variants: naive, tiled");
  if (o.workload == "transpose" && !o.variant.empty() && o.variant != "naive" && o.variant != "tiled" && o.variant != "tiled-padded") {
    bad("transpose variants: naive, tiled, tiled-padded");
  }
  return o;
}

}  // namespace runner
