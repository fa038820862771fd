// mapFile: ArrayBuffers over a file's pages, without a copy (file_map.cc).
#pragma once

#include <napi.h>

namespace streamscope::addon {

Napi::Value mapFileBinding(const Napi::CallbackInfo& info);

}  // namespace streamscope::addon
