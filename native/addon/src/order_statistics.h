// The upper median the analysis's passes take (graph_capture.cc,
// launch_gaps.cc): the element at n / 2 in sorted order, as the
// TypeScript's selection gave it (profiler/analysis/select.ts kthSmallest
// at n >> 1), found without a sort.
#pragma once

#include <algorithm>
#include <cstddef>

namespace streamscope::addon {

// The upper median of v[0 .. n), n > 0 (the values reordered).
inline double medianInPlace(double* v, size_t n) {
  double* mid = v + n / 2;
  std::nth_element(v, mid, v + n);
  return *mid;
}

}  // namespace streamscope::addon
