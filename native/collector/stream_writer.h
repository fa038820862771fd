// The writer thread: the only place where records are encoded and written.
// Third of the collector's three layers (libkineto's output logger): it owns
// the file, the single RecordEncoder and the transport; the other layers
// never touch either.
//
// CUPTI's buffer-completed callback and the resource callbacks only enqueue
// (a buffer pointer and its valid size, or a small closure that encodes a
// side record) and return at once: they run on the target's threads or on
// CUPTI's worker thread, which must never wait for encoding or for the disk.
// This thread takes the queue, translates each buffer (activity_translator),
// write(2)s the bytes in large chunks after every batch, and gives the
// buffers back to the pool. Bytes reach the file after every batch, so a
// target killed hard (SIGKILL) leaves every buffer that CUPTI had delivered
// intact in the file.
//
// Locking: mu_ guards the queue and the flags only. It is never held while
// calling into CUPTI: CUPTI may call bufferRequested/bufferCompleted on the
// calling thread during cuptiActivityFlushAll, and bufferCompleted takes mu_
// to enqueue — holding it across the flush would deadlock.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "activity_translator.h"
#include "buffer_pool.h"
#include "record_encoder.h"

namespace streamscope {

class StreamWriter {
 public:
  using SideRecord = std::function<void(rs::RecordEncoder&)>;

  // Takes ownership of fd (a new, empty file). flush_ms: period of the
  // writer's own cuptiActivityFlushAll(0); 0 = none.
  StreamWriter(int fd, std::string path, uint64_t origin_ns, uint32_t flush_ms, BufferPool& pool);
  StreamWriter(const StreamWriter&) = delete;
  StreamWriter& operator=(const StreamWriter&) = delete;

  // ---- Only while the thread is not running (setup, and exit after stop()).
  // False when the header could not be written (the reason is on stderr).
  bool writeHeader(const rs::FileHeader& header);
  // Encodes and writes on the calling thread.
  void writeNow(const SideRecord& fn);
  // As writeNow, but after an output error it makes one more attempt, from
  // the last complete batch on disk, preceded by an Error record (kErrorOutput,
  // unless one made it to the file already) and a Dropped record (kDropWriter,
  // the records lost): for the records that close the file (Process, End),
  // so that a recording whose disk filled up can still say so. Returns
  // whether the bytes reached the file.
  bool writeFinal(const SideRecord& fn);
  // Processes everything queued, on the calling thread.
  void drainNow();

  // Starts the thread. after_signal_flush(sig) runs on it once the flush
  // that a signal asked for is on disk.
  void start(std::function<void(int)> after_signal_flush);
  // Lets the thread call cuptiActivityFlushAll (periodic and signal
  // flushes): only once CUDA has finished initialising (cuInit returned or a
  // context exists), never from inside cuInit, where InitializeInjection runs.
  void markCudaReady() { cuda_ready_.store(true, std::memory_order_release); }

  // ---- Any thread.
  void enqueueBuffer(uint8_t* buffer, size_t valid_size);
  void enqueue(SideRecord fn);
  // The thread does cuptiActivityFlushAll(FORCED), writes what arrives and
  // a Flush record with this reason.
  void requestFlush(uint32_t reason);
  // Async-signal-safe: one lock-free atomic store (no lock, no notify). The
  // thread polls it at least every kPollMs, flushes (FORCED), writes a Flush
  // record (kFlushSignal) and then calls after_signal_flush(sig).
  void signalArrived(int sig) { pending_signal_.store(sig, std::memory_order_relaxed); }
  // True when a signal is waiting for the thread (async-signal-safe).
  bool signalPending() const { return pending_signal_.load(std::memory_order_relaxed) != 0; }

  // Stops the thread after it has processed its queue; idempotent. Its last
  // CUPTI call has returned when this returns.
  void stop();
  // After this, buffers enqueued go straight back to the pool and side
  // records are dropped; the file is closed. Idempotent.
  void close();

  // ---- Counters (read them on the writer thread or after stop()).
  // Records in the file so far, counting those encoded and about to be
  // written in the current batch (what EndRecord::records_written and
  // FlushRecord::records_so_far report).
  uint64_t recordsInFile() const { return records_in_file_ + (encoder_.recordsWritten() - pending_base_); }
  uint64_t buffersCompleted() const { return buffers_completed_; }
  uint64_t recordsLost() const { return records_lost_; }  // encoded, never written (output error)
  bool outputFailed() const { return output_failed_; }
  const std::string& outputError() const { return output_error_; }
  const ActivityTranslator& translator() const { return translator_; }

  static constexpr int kPollMs = 50;

 private:
  struct Item {
    uint8_t* buffer = nullptr;  // a CUPTI buffer, or
    size_t valid_size = 0;
    SideRecord side;  // a side record
  };

  void run();
  void process(std::vector<Item>& items);
  void flushCupti(uint32_t reason, int sig, uint32_t cupti_flag);
  void takeQueue(std::vector<Item>* out);
  // Writes the pending bytes; false after an output error (now or before).
  bool writeOut();
  void commit(uint64_t records);
  void onOutputError(int err);

  const int fd_;
  const std::string path_;
  const uint64_t origin_;
  const uint32_t flush_ms_;
  BufferPool& pool_;

  // Owned by whichever thread writes (the writer thread while it runs).
  std::vector<uint8_t> bytes_;
  rs::RecordEncoder encoder_{&bytes_};
  ActivityTranslator translator_{encoder_, origin_};
  uint64_t buffers_completed_ = 0;
  uint64_t pending_base_ = 0;     // encoder_.recordsWritten() when bytes_ was last emptied
  uint64_t records_in_file_ = 0;  // records whose bytes write(2) accepted
  uint64_t bytes_in_file_ = 0;
  uint32_t strings_in_file_ = 0;  // interned strings whose String records are in the file
  uint64_t records_lost_ = 0;
  bool output_failed_ = false;
  bool cut_ok_ = true;  // the file was cut back to its last complete batch
  bool error_record_in_file_ = false;
  std::string output_error_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Item> queue_;    // guarded by mu_
  uint32_t flush_reason_ = 0;  // guarded by mu_
  bool stopping_ = false;      // guarded by mu_
  bool closed_ = false;        // guarded by mu_
  std::thread thread_;
  std::function<void(int)> after_signal_flush_;

  std::atomic<int> pending_signal_{0};
  std::atomic<bool> cuda_ready_{false};
  static_assert(std::atomic<int>::is_always_lock_free, "signalArrived must be async-signal-safe");
};

}  // namespace streamscope
