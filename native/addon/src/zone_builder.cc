#include "zone_builder.h"

namespace streamscope::addon {

void PendingTable::sortByLane() {
  // A batch holds few lanes (streams, threads): grouped in one pass by
  // counting (stable: arrival order kept inside a lane), not by a merge sort
  // of the whole batch (~3% of the ingest, perf). Many lanes: the sort.
  constexpr size_t kFewLanes = 64;
  std::vector<std::pair<int64_t, size_t>> lanes;  // lane, rows; then lane, where its rows start
  size_t last = 0;
  bool few = true;
  for (const Key& k : keys) {
    if (!lanes.empty() && lanes[last].first == k.lane) {
      ++lanes[last].second;
      continue;
    }
    size_t i = 0;
    while (i < lanes.size() && lanes[i].first != k.lane) ++i;
    if (i == lanes.size()) {
      if (lanes.size() == kFewLanes) {
        few = false;
        break;
      }
      lanes.emplace_back(k.lane, 0);
    }
    ++lanes[i].second;
    last = i;
  }
  if (few && lanes.size() > 1) {
    std::sort(lanes.begin(), lanes.end());
    size_t at = 0;
    for (auto& [lane, n] : lanes) at += std::exchange(n, at);
    scratch.resize(keys.size());
    last = 0;
    for (const Key& k : keys) {
      if (lanes[last].first != k.lane) {
        last = static_cast<size_t>(std::lower_bound(lanes.begin(), lanes.end(), std::make_pair(k.lane, size_t{0})) - lanes.begin());
      }
      scratch[lanes[last].second++] = k;
    }
    keys.swap(scratch);
  } else if (!few) {
    std::stable_sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) { return a.lane < b.lane; });
  }
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
