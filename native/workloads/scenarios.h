// Stream scenarios: how a workload's chunks are placed on streams, in which
// memory, in which order, with which synchronization. Implemented once for
// every workload (see the table in README.md).
#pragma once

#include "options.h"
#include "workload.h"

namespace runner {

// Runs every chunk of `w` under o.scenario, checks the results, prints the
// summary line. Returns the exit code.
int runScenario(const Workload& w, const Options& o);

}  // namespace runner
