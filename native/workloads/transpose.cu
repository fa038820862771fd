// transpose: N x N float32. naive: reads coalesced, writes strided.
// tiled: a 32 x 32 tile through shared memory, so both reads and writes are
// coalesced, but the column-wise reads of the tile hit the same shared
// memory bank (32-way conflicts). tiled-padded: the tile is 32 x 33, which
// moves each row to another bank and removes the conflicts.
#include "check.h"
#include "workload.h"

namespace runner {
namespace {

constexpr int kTile = 32;
constexpr int kRowsPerBlock = 8;

__global__ void transposeNaive(const float* in, float* out, int n) {
  const int x = blockIdx.x * kTile + threadIdx.x;
  for (int j = 0; j < kTile; j += kRowsPerBlock) {
    const int y = blockIdx.y * kTile + threadIdx.y + j;
    if (x < n && y < n) out[x * n + y] = in[y * n + x];
  }
}

template <int kPad>
__global__ void transposeTiled(const float* in, float* out, int n) {
  __shared__ float tile[kTile][kTile + kPad];
  int x = blockIdx.x * kTile + threadIdx.x;
  for (int j = 0; j < kTile; j += kRowsPerBlock) {
    const int y = blockIdx.y * kTile + threadIdx.y + j;
    if (x < n && y < n) tile[threadIdx.y + j][threadIdx.x] = in[y * n + x];
  }
  __syncthreads();
  x = blockIdx.y * kTile + threadIdx.x;
  for (int j = 0; j < kTile; j += kRowsPerBlock) {
    const int y = blockIdx.x * kTile + threadIdx.y + j;
    if (x < n && y < n) out[y * n + x] = tile[threadIdx.x][threadIdx.y + j];
  }
}

class Transpose : public Workload {
 public:
  explicit Transpose(const Options& o)
      : n_(o.size ? o.size : 4096), variant_(o.variant.empty() ? "tiled-padded" : o.variant), seed_(o.seed) {}
  std::string describe() const override { return "transpose " + variant_ + " " + std::to_string(n_) + "^2 float32"; }
  std::vector<size_t> inputBytes() const override { return {bytes()}; }
  size_t outputBytes() const override { return bytes(); }
  void fillInputs(int chunk, const std::vector<void*>& in) const override {
    fillUniform(static_cast<float*>(in[0]), n_ * n_, seed_ * 15485863u + chunk);
  }
  void preload() const override {
    cudaFuncAttributes a;
    if (variant_ == "naive") CUDA_CHECK(cudaFuncGetAttributes(&a, transposeNaive));
    else if (variant_ == "tiled") CUDA_CHECK(cudaFuncGetAttributes(&a, transposeTiled<0>));
    else CUDA_CHECK(cudaFuncGetAttributes(&a, transposeTiled<1>));
  }
  void launch(const std::vector<void*>& in, void* out, cudaStream_t s) const override {
    const dim3 block(kTile, kRowsPerBlock);
    const dim3 grid(static_cast<unsigned>((n_ + kTile - 1) / kTile), static_cast<unsigned>((n_ + kTile - 1) / kTile));
    const auto* src = static_cast<const float*>(in[0]);
    auto* dst = static_cast<float*>(out);
    const int n = static_cast<int>(n_);
    if (variant_ == "naive") transposeNaive<<<grid, block, 0, s>>>(src, dst, n);
    else if (variant_ == "tiled") transposeTiled<0><<<grid, block, 0, s>>>(src, dst, n);
    else transposeTiled<1><<<grid, block, 0, s>>>(src, dst, n);
    CUDA_CHECK_LAUNCH();
  }
  bool verify(const std::vector<void*>& in, const void* out, std::string* why) const override {
    const auto* a = static_cast<const float*>(in[0]);
    const auto* t = static_cast<const float*>(out);
    for (long y = 0; y < n_; y++) {
      for (long x = 0; x < n_; x++) {
        if (t[x * n_ + y] != a[y * n_ + x]) {
          *why = "element (" + std::to_string(x) + "," + std::to_string(y) + ") not transposed";
          return false;
        }
      }
    }
    return true;
  }

 private:
  size_t bytes() const { return sizeof(float) * static_cast<size_t>(n_) * n_; }
  long n_;
  std::string variant_;
  unsigned seed_;
};

}  // namespace

std::unique_ptr<Workload> makeTranspose(const Options& o) { return std::make_unique<Transpose>(o); }

}  // namespace runner
