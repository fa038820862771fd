// Activity buffers handed to CUPTI: fixed size, reused through a free list,
// capped. The first of the collector's layers (with injection.cc, the part
// that faces CUPTI).
//
// CUPTI asks for a buffer whenever it needs room for activity records
// (bufferRequested — from any thread, concurrently, including CUPTI's own
// worker thread and a thread inside cuptiActivityFlushAll) and hands it back
// full (bufferCompleted). At the cap a request is refused: CUPTI then drops
// records and counts them (cuptiActivityGetNumDroppedRecords). Each refusal
// is counted here as well and ends up in a Dropped record (kDropBufferCap):
// the cap stops collection loudly, never silently.
//
// Thread-safe. Buffers are never freed while the process runs: CUPTI may
// still hold one during process teardown.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace streamscope {

class BufferPool {
 public:
  // buffer_bytes is rounded up to a multiple of 64 and to at least
  // kMinBufferBytes; max_buffers is at least 1.
  BufferPool(size_t buffer_bytes, size_t max_buffers);
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  // A free or newly allocated buffer of bufferBytes(), aligned to 64 bytes
  // (CUPTI needs ACTIVITY_RECORD_ALIGNMENT, 8); nullptr when max_buffers are
  // in use or memory is exhausted — the refusal is counted.
  uint8_t* acquire();
  // Back to the free list. Every buffer acquire() handed out must come back
  // here exactly once.
  void release(uint8_t* buffer);

  size_t bufferBytes() const { return buffer_bytes_; }
  size_t maxBuffers() const { return max_buffers_; }
  uint64_t refusals() const { return refusals_.load(std::memory_order_relaxed); }
  size_t allocated() const;    // buffers created so far (<= maxBuffers())
  size_t outstanding() const;  // buffers handed out and not yet released

  static constexpr size_t kMinBufferBytes = 64 * 1024;

 private:
  const size_t buffer_bytes_;
  const size_t max_buffers_;
  mutable std::mutex mu_;
  std::vector<uint8_t*> free_;
  size_t allocated_ = 0;
  std::atomic<uint64_t> refusals_{0};
};

}  // namespace streamscope
