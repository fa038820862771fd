#include "zone_builder.h"

namespace streamscope::addon {

void PendingTable::sortByLane() {
  std::stable_sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) { return a.lane < b.lane; });
  for (size_t i = 0; i < keys.size();) {
    size_t j = i;
    while (j < keys.size() && keys[j].lane == keys[i].lane) ++j;
    auto by_start = [](const Key& a, const Key& b) { return a.start < b.start; };
    if (!std::is_sorted(keys.begin() + i, keys.begin() + j, by_start)) {
      std::stable_sort(keys.begin() + i, keys.begin() + j, by_start);
    }
    i = j;
  }
}

std::string ZoneBuilder::copyKindRows() const {
  std::string json = "{";
  for (const auto& [kind, n] : copy_kinds_) {
    if (json.size() > 1) json += ',';
    json += '"' + std::to_string(kind) + "\":" + std::to_string(n);
  }
  return json + "}";
}

}  // namespace streamscope::addon
