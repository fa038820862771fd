// The upper median the analysis's passes take (graph_capture.cc,
// launch_gaps.cc): the element at n / 2 in sorted order, as the
// TypeScript's selection gave it (profiler/analysis/select.ts kthSmallest
// at n >> 1), found without a sort.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace streamscope::addon {

namespace order_statistics {

// A double's bits as an unsigned integer in the same order (negative values' bits inverted, positive values' sign bit
// set), and back.
inline uint64_t orderedBits(double d) {
  uint64_t u;
  std::memcpy(&u, &d, sizeof u);
  return (u >> 63) ? ~u : (u | 0x8000000000000000ull);
}
inline double fromOrderedBits(uint64_t u) {
  u = (u >> 63) ? (u & 0x7fffffffffffffffull) : ~u;
  double d;
  std::memcpy(&d, &u, sizeof d);
  return d;
}

}  // namespace order_statistics

// The k-th smallest of v[0 .. n) (0-based, k < n; no NaN among them), v left as it is. Selected by its bits, 16 at a
// time from the top: each step a count of the values that share the bits found so far, by their next 16, then the
// bucket that holds the k-th; done once the bucket's values are all one. At 10 M values on the development VM (a
// microbenchmark): a few distinct durations close together 51 ms where std::nth_element took 78, uniform ones 28
// against 97.
inline double kthSmallest(const double* v, size_t n, size_t k) {
  using order_statistics::orderedBits;
  std::vector<uint32_t> count(size_t{1} << 16);
  uint64_t prefix = 0;
  for (int shift = 48; shift >= 0; shift -= 16) {
    const uint64_t above = shift == 48 ? 0 : ~uint64_t{0} << (shift + 16);
    std::fill(count.begin(), count.end(), 0);
    uint64_t lo = UINT64_MAX, hi = 0;
    for (size_t i = 0; i < n; i++) {
      const uint64_t u = orderedBits(v[i]);
      if ((u & above) != prefix) continue;
      count[(u >> shift) & 0xffff]++;
      lo = u < lo ? u : lo;
      hi = u > hi ? u : hi;
    }
    if (lo == hi) return order_statistics::fromOrderedBits(lo);  // every value with these bits is this one
    size_t bucket = 0;
    while (k >= count[bucket]) k -= count[bucket++];
    prefix |= uint64_t{bucket} << shift;
  }
  return order_statistics::fromOrderedBits(prefix);
}

// The upper median of v[0 .. n), n > 0.
inline double upperMedian(const double* v, size_t n) { return kthSmallest(v, n, n / 2); }

}  // namespace streamscope::addon
