// JavaScript's arithmetic where the native passes must give the values the
// TypeScript they replaced gave, to the bit (replay_scheduler.cc,
// issue_walk.cc): Math.max and Math.min, which std::max and std::min are
// not (NaN, and the sign of zero). The rest is plain IEEE doubles in the
// same order, built without fused multiply-add (binding.gyp
// -ffp-contract=off).
#pragma once

#include <cmath>
#include <limits>

namespace streamscope::addon {

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Math.max and Math.min: NaN if either is, +0 above -0.
inline double jsMax(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return kNaN;
  if (a > b) return a;
  if (b > a) return b;
  return std::signbit(a) ? b : a;
}
inline double jsMin(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return kNaN;
  if (a < b) return a;
  if (b < a) return b;
  return std::signbit(a) ? a : b;
}

}  // namespace streamscope::addon
