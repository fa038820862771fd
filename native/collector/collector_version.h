// The collector's version, stored in FileHeader::collector_version
// (major * 10000 + minor * 100 + patch). Shared by the injection library and
// the synthetic stream tool so that both stamp the same value.
#pragma once

#include <cstdint>

namespace streamscope {

inline constexpr uint32_t kCollectorVersion = 100;  // 0.1.0

}  // namespace streamscope
