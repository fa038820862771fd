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

std::string copyKindRowsJson(const std::map<int64_t, int64_t>& rows_per_kind) {
  std::string json = "{";
  for (const auto& [kind, n] : rows_per_kind) {
    if (json.size() > 1) json += ',';
    json += '"' + std::to_string(kind) + "\":" + std::to_string(n);
  }
  return json + "}";
}

void BlockZones::closeBlock() {
  if (block_.empty()) return;
  auto by_lane = [](const Row& a, const Row& b) { return a.lane < b.lane; };
  // Stable: a lane's rows stay in rowid order.
  if (!std::is_sorted(block_.begin(), block_.end(), by_lane)) std::stable_sort(block_.begin(), block_.end(), by_lane);
  for (auto i = block_.cbegin(); i != block_.cend() && !broken_;) {
    auto j = i;
    while (j != block_.cend() && j->lane == i->lane) ++j;
    zoneOf(i, j);
    i = j;
  }
  block_.clear();
}

void BlockZones::zoneOf(std::vector<Row>::const_iterator first, std::vector<Row>::const_iterator last) {
  // zonesFromRowsSql: min(start), min(id), max(id), max(end), count, min/max(correlation) of the non-NULL ones,
  // sum(end - start); zoneShapeSql: max(end - start), and copies' rows per copy kind.
  Zone z{first->lane, first->id, (last - 1)->id, first->start, first->end, 0, kNull, kNull, 0, 0, 0};
  bool in_start_order = true;
  for (auto r = first; r != last; ++r) {
    int64_t dur;
    if (__builtin_sub_overflow(r->end, r->start, &dur) || addBusy(z.busy, r->start, r->end)) return invalidate();
    z.max_dur = r == first ? dur : std::max(z.max_dur, dur);
    if (r != first && r->start < (r - 1)->start) in_start_order = false;
    z.start = std::min(z.start, r->start);
    z.end = std::max(z.end, r->end);
    if (r->correlation != kNull) {
      z.min_corr = z.min_corr == kNull ? r->correlation : std::min(z.min_corr, r->correlation);
      z.max_corr = z.max_corr == kNull ? r->correlation : std::max(z.max_corr, r->correlation);
    }
    if (count_copy_kinds_) ++copy_kinds_[r->copy_kind];
    ++z.rows;
  }
  // zoneShapeSql's max_gap_ns: max(0, the largest start minus the latest end of the rows before it in (start, id)
  // order). Rows in rowid order are in that order unless a start goes back (then sorted, stably: ids stay ascending).
  if (!in_start_order) {
    by_start_.assign(first, last);
    std::stable_sort(by_start_.begin(), by_start_.end(), [](const Row& a, const Row& b) { return a.start < b.start; });
    first = by_start_.cbegin();
    last = by_start_.cend();
  }
  int64_t prev_end = first->end;
  for (auto r = first + 1; r < last; ++r) {
    int64_t gap;
    if (__builtin_sub_overflow(r->start, prev_end, &gap)) return invalidate();
    z.max_gap = std::max(z.max_gap, gap);
    prev_end = std::max(prev_end, r->end);
  }
  zones_.push_back(Out{z, count_copy_kinds_ ? std::optional<std::string>(copyKindRowsJson(copy_kinds_)) : std::nullopt});
  copy_kinds_.clear();
}

void BlockZones::finish() {
  closeBlock();
  if (broken_) return;
  // Made block by block; GROUP BY lane, block emits them by lane first (stable: blocks stay ascending).
  std::stable_sort(zones_.begin(), zones_.end(), [](const Out& a, const Out& b) { return a.zone.lane < b.zone.lane; });
}

}  // namespace streamscope::addon
