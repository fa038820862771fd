// Command-line options of streamscope-runner.
#pragma once

#include <string>

namespace runner {

struct Options {
  std::string workload;
  std::string scenario;  // default: concurrent
  std::string variant;   // matmul: naive|tiled (default tiled); transpose: naive|tiled|tiled-padded (default tiled-padded)
  long size = 0;         // 0: the workload's default
  long iterations = 0;   // 0: the workload's default (1 pass over the chunks; launch-loop: 200000 launches)
  int chunks = 8;
  int streams = 0;  // 0: one per chunk (launch-loop: 4)
  unsigned seed = 1;
  bool verbose = false;
};

// Parses argv; prints help/list and exits 0, or one clear line and exits 2.
Options parseOptions(int argc, char** argv);

extern const char* const kWorkloads[];
extern const char* const kScenarios[];

}  // namespace runner
