// mapFile: ArrayBuffers over a file's pages, without a copy; writeFileDirect:
// a file written around the page cache, on a thread of the pool (file_map.cc).
#pragma once

#include <napi.h>

namespace streamscope::addon {

Napi::Value mapFileBinding(const Napi::CallbackInfo& info);
Napi::Value writeFileDirectBinding(const Napi::CallbackInfo& info);

}  // namespace streamscope::addon
