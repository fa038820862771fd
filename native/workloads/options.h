// Command-line options of streamscope-runner.
#pragma once

#include <string>

namespace runner {

struct Options {
  std::string workload;
  std::string scenario;
  std::string variant;  // matmul: naive|tiled; transpose: naive|tiled|tiled-padded
  long size = 0;        // 0: the workload's default
  int iterations = 1;
  int chunks = 8;
  int streams = 0;      // 0: one per chunk (launch-loop: 4)
  unsigned seed = 1;
  bool verbose = false;
};

// Parses argv; prints help/list and exits 0, or a clear message and exits 2.
Options parseOptions(int argc, char** argv);

extern const char* const kWorkloads[];
extern const char* const kScenarios[];

}  // namespace runner
