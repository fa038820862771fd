#pragma once
#include "options.h"
namespace runner {
// The launch-bound benchmark loop; returns the exit code.
int runLaunchLoop(const Options& o);
}  // namespace runner
