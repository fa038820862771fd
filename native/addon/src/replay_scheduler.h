// replaySchedule: the what-if replay's discrete-event simulation over a
// recording's host model and dependency graph (replay_scheduler.cc;
// profiler/analysis/replay/replay.ts builds its inputs).
#pragma once

#include <napi.h>

namespace streamscope::addon {

Napi::Value replayScheduleBinding(const Napi::CallbackInfo& info);

}  // namespace streamscope::addon
