// Deterministic inputs: the same --seed gives the same arrays on every
// machine (std::mt19937 is specified exactly by the standard; the uniform
// distributions are the library's, the same on every machine we build on).
#include <random>

#include "workload.h"

namespace runner {

void fillUniform(float* p, size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.f, 1.f);
  for (size_t i = 0; i < n; i++) p[i] = u(rng);
}

void fillUniform(double* p, size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (size_t i = 0; i < n; i++) p[i] = u(rng);
}

}  // namespace runner
