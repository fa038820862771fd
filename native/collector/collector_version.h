// The collector's version, stored in FileHeader::collector_version
// (major * 10000 + minor * 100 + patch): StreamScope's version from
// package.json, which native/CMakeLists.txt reads and passes as
// STREAMSCOPE_COLLECTOR_VERSION. Shared by the injection library and the
// synthetic stream tool so that both stamp the same value.
#pragma once

#include <cstdint>

#ifndef STREAMSCOPE_COLLECTOR_VERSION
#error "STREAMSCOPE_COLLECTOR_VERSION comes from package.json's version: build with native/CMakeLists.txt"
#endif

namespace streamscope {

inline constexpr uint32_t kCollectorVersion = STREAMSCOPE_COLLECTOR_VERSION;

}  // namespace streamscope
