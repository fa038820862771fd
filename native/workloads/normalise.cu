// normalise: per-column min/max scaling of 60 x N float64 arrays, the
// workload of the classic "why don't my Numba streams overlap?" question:
// x'[r][c] = (x[r][c] - min_c) / (max_c - min_c). One thread per column
// walks the 60 rows, as the forum code did.
#include <cmath>
#include <cstdio>

#include "check.h"
#include "workload.h"

namespace runner {
namespace {

constexpr int kRows = 60;

__global__ void normaliseColumns(const double* __restrict__ x, double* __restrict__ out, int cols) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= cols) return;
  double lo = x[c], hi = x[c];
  for (int r = 1; r < kRows; r++) {
    const double v = x[r * cols + c];
    lo = fmin(lo, v);
    hi = fmax(hi, v);
  }
  const double scale = hi - lo;
  for (int r = 0; r < kRows; r++) out[r * cols + c] = scale != 0.0 ? (x[r * cols + c] - lo) / scale : 0.0;
}

class Normalise : public Workload {
 public:
  explicit Normalise(const Options& o) : cols_(o.size ? o.size : 98450), seed_(o.seed) {}
  std::string describe() const override { return "normalise " + std::to_string(kRows) + "x" + std::to_string(cols_) + " float64"; }
  std::vector<size_t> inputBytes() const override { return {bytes()}; }
  size_t outputBytes() const override { return bytes(); }
  void fillInputs(int chunk, const std::vector<void*>& in) const override {
    fillUniform(static_cast<double*>(in[0]), kRows * cols_, seed_ * 7919u + chunk);
  }
  void preload() const override {
    cudaFuncAttributes a;
    CUDA_CHECK(cudaFuncGetAttributes(&a, normaliseColumns));
  }
  void launch(const std::vector<void*>& in, void* out, cudaStream_t s) const override {
    const int threads = 128;
    const int blocks = static_cast<int>((cols_ + threads - 1) / threads);
    normaliseColumns<<<blocks, threads, 0, s>>>(static_cast<const double*>(in[0]), static_cast<double*>(out), static_cast<int>(cols_));
    CUDA_CHECK_LAUNCH();
  }
  bool verify(const std::vector<void*>& in, const void* out, std::string* why) const override {
    const auto* x = static_cast<const double*>(in[0]);
    const auto* y = static_cast<const double*>(out);
    for (long c = 0; c < cols_; c++) {
      double lo = x[c], hi = x[c];
      for (int r = 1; r < kRows; r++) lo = std::fmin(lo, x[r * cols_ + c]), hi = std::fmax(hi, x[r * cols_ + c]);
      for (int r = 0; r < kRows; r++) {
        const double want = hi != lo ? (x[r * cols_ + c] - lo) / (hi - lo) : 0.0;
        if (std::fabs(y[r * cols_ + c] - want) > 1e-12) {
          *why = "element (" + std::to_string(r) + "," + std::to_string(c) + ") = " + std::to_string(y[r * cols_ + c]) + ", expected " +
                 std::to_string(want);
          return false;
        }
      }
    }
    return true;
  }

 private:
  size_t bytes() const { return sizeof(double) * kRows * static_cast<size_t>(cols_); }
  long cols_;
  unsigned seed_;
};

}  // namespace

std::unique_ptr<Workload> makeNormalise(const Options& o) { return std::make_unique<Normalise>(o); }

}  // namespace runner
