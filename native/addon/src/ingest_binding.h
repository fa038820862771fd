#pragma once
#include <napi.h>

namespace streamscope::addon {
// Registers class Ingest on `exports`.
void initIngest(Napi::Env env, Napi::Object exports);
}  // namespace streamscope::addon
