// Small integer keys (row ids, name ids) → values, as replay-host.ts's
// SmallIntMap holds them: an array for keys in [0, 2^22), where a
// recording's ids fall, a hash map for the rest; -1 for a key not set.
// For the passes that look one up per op or call (dense_indices.cc,
// issue_walk.cc).
#pragma once

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace streamscope::addon {

template <typename V>
class SmallIntMap {
 public:
  static constexpr int64_t kDense = int64_t{1} << 22;

  V get(int64_t key) const {
    if (key >= 0 && key < static_cast<int64_t>(dense_.size())) return dense_[static_cast<size_t>(key)];
    if (key >= 0 && key < kDense) return V(-1);
    const auto it = sparse_.find(key);
    return it == sparse_.end() ? V(-1) : it->second;
  }
  void set(int64_t key, V value) {
    if (key >= 0 && key < kDense) {
      if (key >= static_cast<int64_t>(dense_.size()))
        dense_.resize(std::max<size_t>(static_cast<size_t>(key) + 1, dense_.size() * 2), V(-1));
      dense_[static_cast<size_t>(key)] = value;
    } else {
      sparse_[key] = value;
    }
  }

 private:
  std::vector<V> dense_;
  std::unordered_map<int64_t, V> sparse_;
};

}  // namespace streamscope::addon
