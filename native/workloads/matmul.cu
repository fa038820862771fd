// matmul: C = A x B, N x N float32, naive (one thread per output element,
// rows of A and columns of B from global memory) or tiled (16 x 16 tiles in
// shared memory, each element of A and B read from global memory N/16 times
// instead of N).
#include <cmath>

#include "check.h"
#include "workload.h"

namespace runner {
namespace {

constexpr int kTile = 16;

__global__ void matmulNaive(const float* a, const float* b, float* c, int n) {
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= n || col >= n) return;
  float acc = 0.f;
  for (int k = 0; k < n; k++) acc += a[row * n + k] * b[k * n + col];
  c[row * n + col] = acc;
}

__global__ void matmulTiled(const float* a, const float* b, float* c, int n) {
  __shared__ float ta[kTile][kTile];
  __shared__ float tb[kTile][kTile];
  const int row = blockIdx.y * kTile + threadIdx.y;
  const int col = blockIdx.x * kTile + threadIdx.x;
  float acc = 0.f;
  for (int t = 0; t < (n + kTile - 1) / kTile; t++) {
    const int ka = t * kTile + threadIdx.x;
    const int kb = t * kTile + threadIdx.y;
    ta[threadIdx.y][threadIdx.x] = row < n && ka < n ? a[row * n + ka] : 0.f;
    tb[threadIdx.y][threadIdx.x] = kb < n && col < n ? b[kb * n + col] : 0.f;
    __syncthreads();
    for (int k = 0; k < kTile; k++) acc += ta[threadIdx.y][k] * tb[k][threadIdx.x];
    __syncthreads();
  }
  if (row < n && col < n) c[row * n + col] = acc;
}

class Matmul : public Workload {
 public:
  explicit Matmul(const Options& o) : n_(o.size ? o.size : 1024), tiled_(o.variant != "naive"), seed_(o.seed) {}
  std::string describe() const override {
    return std::string("matmul ") + (tiled_ ? "tiled " : "naive ") + std::to_string(n_) + "^2 float32";
  }
  std::vector<size_t> inputBytes() const override { return {bytes(), bytes()}; }
  size_t outputBytes() const override { return bytes(); }
  void fillInputs(int chunk, const std::vector<void*>& in) const override {
    fillUniform(static_cast<float*>(in[0]), n_ * n_, seed_ * 104729u + 2 * chunk);
    fillUniform(static_cast<float*>(in[1]), n_ * n_, seed_ * 104729u + 2 * chunk + 1);
  }
  void preload() const override {
    cudaFuncAttributes a;
    if (tiled_) CUDA_CHECK(cudaFuncGetAttributes(&a, matmulTiled));
    else CUDA_CHECK(cudaFuncGetAttributes(&a, matmulNaive));
  }
  void launch(const std::vector<void*>& in, void* out, cudaStream_t s) const override {
    const dim3 block(kTile, kTile);
    const dim3 grid(static_cast<unsigned>((n_ + kTile - 1) / kTile), static_cast<unsigned>((n_ + kTile - 1) / kTile));
    const auto* a = static_cast<const float*>(in[0]);
    const auto* b = static_cast<const float*>(in[1]);
    if (tiled_) matmulTiled<<<grid, block, 0, s>>>(a, b, static_cast<float*>(out), static_cast<int>(n_));
    else matmulNaive<<<grid, block, 0, s>>>(a, b, static_cast<float*>(out), static_cast<int>(n_));
    CUDA_CHECK_LAUNCH();
  }
  // The full CPU product is O(N^3): check 256 deterministic elements.
  bool verify(const std::vector<void*>& in, const void* out, std::string* why) const override {
    const auto* a = static_cast<const float*>(in[0]);
    const auto* b = static_cast<const float*>(in[1]);
    const auto* c = static_cast<const float*>(out);
    for (int s = 0; s < 256; s++) {
      const long row = (s * 7919L) % n_, col = (s * 104729L + 13) % n_;
      double want = 0;
      for (long k = 0; k < n_; k++) want += static_cast<double>(a[row * n_ + k]) * b[k * n_ + col];
      const double got = c[row * n_ + col];
      if (std::fabs(got - want) > 1e-3 * std::fabs(want) + 1e-3) {
        *why = "C(" + std::to_string(row) + "," + std::to_string(col) + ") = " + std::to_string(got) + ", expected " + std::to_string(want);
        return false;
      }
    }
    return true;
  }

 private:
  size_t bytes() const { return sizeof(float) * static_cast<size_t>(n_) * n_; }
  long n_;
  bool tiled_;
  unsigned seed_;
};

}  // namespace

std::unique_ptr<Workload> makeMatmul(const Options& o) { return std::make_unique<Matmul>(o); }

}  // namespace runner
