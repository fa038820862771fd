#include "buffer_pool.h"

#include <algorithm>
#include <cstdlib>

namespace streamscope {

// CUPTI requires 8-byte alignment; a cache line costs nothing more.
static constexpr size_t kAlignment = 64;

static size_t roundedSize(size_t bytes) {
  bytes = std::max(bytes, BufferPool::kMinBufferBytes);
  return (bytes + kAlignment - 1) / kAlignment * kAlignment;  // aligned_alloc wants a multiple
}

BufferPool::BufferPool(size_t buffer_bytes, size_t max_buffers)
    : buffer_bytes_(roundedSize(buffer_bytes)), max_buffers_(std::max<size_t>(max_buffers, 1)) {
  free_.reserve(max_buffers_);
}

uint8_t* BufferPool::acquire() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!free_.empty()) {
    uint8_t* b = free_.back();
    free_.pop_back();
    return b;
  }
  if (allocated_ < max_buffers_) {
    // Pages are committed only as CUPTI fills them.
    if (auto* b = static_cast<uint8_t*>(std::aligned_alloc(kAlignment, buffer_bytes_))) {
      ++allocated_;
      return b;
    }
  }
  refusals_.fetch_add(1, std::memory_order_relaxed);
  return nullptr;
}

void BufferPool::release(uint8_t* buffer) {
  if (!buffer) return;
  std::lock_guard<std::mutex> lock(mu_);
  free_.push_back(buffer);  // never reallocates: capacity is max_buffers_
}

size_t BufferPool::allocated() const {
  std::lock_guard<std::mutex> lock(mu_);
  return allocated_;
}

size_t BufferPool::outstanding() const {
  std::lock_guard<std::mutex> lock(mu_);
  return allocated_ - free_.size();
}

}  // namespace streamscope
