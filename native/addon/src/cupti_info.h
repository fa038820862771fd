// Whether CUPTI can be loaded, and which version it is: checked before a
// target is started so that "CUPTI missing" or "too old" is said up front.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace streamscope::addon {

struct CuptiInfo {
  std::string path;
  std::optional<uint32_t> version;
  std::optional<std::string> error;
};

CuptiInfo queryCupti(const std::string& library_path);

}  // namespace streamscope::addon
