#include "stream_writer.h"

#include <sys/syscall.h>

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include <cupti.h>

namespace streamscope {

namespace {

// Bytes are handed to write(2) at the end of every batch, and in between
// whenever this much has accumulated.
constexpr size_t kWriteChunk = 4u << 20;

// flushCupti without calling cuptiActivityFlushAll.
constexpr uint32_t kNoCuptiFlush = ~0u;

// write(2) all of [p, p + n): retries on EINTR and short writes.
// Returns 0 or the errno of the failure.
int writeAll(int fd, const uint8_t* p, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (w == 0) return EIO;  // no progress on a regular file: do not spin
    p += w;
    n -= static_cast<size_t>(w);
  }
  return 0;
}

}  // namespace

StreamWriter::StreamWriter(int fd, std::string path, uint64_t origin_ns, uint32_t flush_ms, BufferPool& pool)
    : fd_(fd), path_(std::move(path)), origin_(origin_ns), flush_ms_(flush_ms), pool_(pool) {
  bytes_.reserve(kWriteChunk + (1u << 20));
}

// ---- Synchronous use (thread not running) -----------------------------------

bool StreamWriter::writeHeader(const rs::FileHeader& header) {
  encoder_.writeHeader(header);
  // The header is not a record: keep it out of the record counts.
  const int err = writeAll(fd_, bytes_.data(), bytes_.size());
  if (err == 0) bytes_in_file_ += bytes_.size();
  bytes_.clear();
  if (err != 0) {
    std::fprintf(stderr, "streamscope: cannot write %s: %s; not recording\n", path_.c_str(), std::strerror(err));
    output_failed_ = true;
    output_error_ = std::strerror(err);
    return false;
  }
  return true;
}

void StreamWriter::writeNow(const SideRecord& fn) {
  fn(encoder_);
  writeOut();
}

bool StreamWriter::writeFinal(const SideRecord& fn) {
  if (output_failed_) {
    if (!cut_ok_) return false;  // the file ends in a partial record: appending would not help
    // Everything after the last complete batch was cut off the file (see
    // onOutputError); try once more from there. Strings first interned
    // after that point are emitted again, with the same ids.
    records_lost_ += encoder_.recordsWritten() - pending_base_;
    bytes_.clear();
    pending_base_ = encoder_.recordsWritten();
    encoder_.forgetStringsAbove(strings_in_file_);
    output_failed_ = false;
    if (!error_record_in_file_) {
      rs::ErrorRecord e{};
      e.code = rs::kErrorOutput;
      e.message_sid = encoder_.intern("writing the record stream failed: " + output_error_);
      encoder_.write(e);
    }
    rs::DroppedRecord d{};
    d.count = records_lost_;
    d.source = rs::kDropWriter;
    d.context_id = rs::kNone;
    d.stream_id = rs::kNone;
    encoder_.write(d);
  }
  fn(encoder_);
  return writeOut();
}

void StreamWriter::drainNow() {
  std::vector<Item> batch;
  takeQueue(&batch);
  process(batch);
}

// ---- The thread ---------------------------------------------------------------

void StreamWriter::start(std::function<void(int)> after_signal_flush) {
  after_signal_flush_ = std::move(after_signal_flush);
  // The thread blocks the asynchronous signals, so that the target's
  // handlers (and ours) run on the target's own threads, as they would
  // without the collector. A thread inherits the mask of its creator: block
  // here, create, restore.
  sigset_t all, old;
  sigfillset(&all);
  for (int s : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGABRT, SIGSYS}) sigdelset(&all, s);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  thread_ = std::thread([this] { run(); });
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

void StreamWriter::enqueueBuffer(uint8_t* buffer, size_t valid_size) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!closed_) {
      queue_.push_back(Item{buffer, valid_size, nullptr});
      buffer = nullptr;
    }
  }
  if (buffer) pool_.release(buffer);  // the file is closed: nothing will read it
  else cv_.notify_one();
}

void StreamWriter::enqueue(SideRecord fn) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return;
    queue_.push_back(Item{nullptr, 0, std::move(fn)});
  }
  cv_.notify_one();
}

void StreamWriter::requestFlush(uint32_t reason) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    flush_reason_ = reason;
  }
  cv_.notify_one();
}

void StreamWriter::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!thread_.joinable()) return;
    stopping_ = true;
  }
  cv_.notify_one();
  thread_.join();
}

void StreamWriter::close() {
  std::vector<Item> rest;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return;
    closed_ = true;
    rest.swap(queue_);
  }
  for (Item& item : rest) pool_.release(item.buffer);  // unread: counted nowhere, the End record is written
  ::close(fd_);
}

void StreamWriter::takeQueue(std::vector<Item>* out) {
  std::lock_guard<std::mutex> lock(mu_);
  out->swap(queue_);
}

void StreamWriter::run() {
  // Driver calls made here (device queries) are the collector's, not the target's.
  translator_.ignoreApiCallsFromThread(static_cast<uint32_t>(syscall(SYS_gettid)));
  using Clock = std::chrono::steady_clock;
  const auto period = std::chrono::milliseconds(flush_ms_);
  auto next_periodic = Clock::now() + period;
  std::vector<Item> batch;
  for (;;) {
    uint32_t flush_reason = 0;
    bool stopping = false;
    {
      std::unique_lock<std::mutex> lock(mu_);
      auto wake = Clock::now() + std::chrono::milliseconds(kPollMs);
      if (flush_ms_ > 0 && next_periodic < wake) wake = next_periodic;
      cv_.wait_until(lock, wake, [this] { return !queue_.empty() || stopping_ || flush_reason_ != 0; });
      batch.swap(queue_);
      flush_reason = flush_reason_;
      flush_reason_ = 0;
      stopping = stopping_;
    }
    try {
      process(batch);
      batch.clear();
      // Stopping (atexit): the caller does the final forced flush itself,
      // once this thread is gone, so that no two flushes of ours overlap.
      if (stopping) break;
      const bool ready = cuda_ready_.load(std::memory_order_acquire);
      const int sig = pending_signal_.exchange(0, std::memory_order_relaxed);
      if (sig != 0) {
        // Before CUDA is ready there is nothing in CUPTI's buffers worth the
        // risk of flushing from inside cuInit; the signal is still honoured.
        flushCupti(rs::kFlushSignal, sig, ready ? static_cast<uint32_t>(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) : kNoCuptiFlush);
        if (after_signal_flush_) after_signal_flush_(sig);
      } else if (!ready) {
        continue;
      } else if (flush_reason != 0) {
        flushCupti(flush_reason, 0, CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
      } else if (flush_ms_ > 0 && Clock::now() >= next_periodic) {
        // CUPTI's own periodic flush (cuptiActivityFlushPeriod) returns full
        // buffers only; a default flush also returns partly filled buffers
        // whose records are all complete, so a quiet target's records reach
        // the file within flush_ms too. CUPTI documents this call as meant
        // for "a regular interval in a separate thread".
        flushCupti(rs::kFlushPeriodic, 0, 0);
        next_periodic = Clock::now() + period;
      }
    } catch (const std::exception& e) {
      // Out of memory, most likely. Never let it reach the target.
      std::fprintf(stderr, "streamscope: writer thread: %s\n", e.what());
      for (Item& item : batch) pool_.release(item.buffer);
      batch.clear();
    }
  }
}

void StreamWriter::flushCupti(uint32_t reason, int sig, uint32_t cupti_flag) {
  // Hazard: CUPTI calls bufferCompleted (which takes mu_) on this thread
  // while it flushes; mu_ is not held here.
  if (cupti_flag != kNoCuptiFlush) cuptiActivityFlushAll(cupti_flag);
  std::vector<Item> batch;
  takeQueue(&batch);
  process(batch);
  uint64_t now = 0;
  cuptiGetTimestamp(&now);
  rs::FlushRecord f{};
  f.reason = reason;
  f.signal = static_cast<uint32_t>(sig);
  f.at_ns = static_cast<int64_t>(now - origin_);
  f.records_so_far = recordsInFile();
  encoder_.write(f);
  writeOut();
}

void StreamWriter::process(std::vector<Item>& items) {
  for (Item& item : items) {
    if (item.buffer) {
      translator_.translateBuffer(item.buffer, item.valid_size);
      ++buffers_completed_;
      pool_.release(item.buffer);  // its records are copied into bytes_
      item.buffer = nullptr;
    } else if (item.side) {
      item.side(encoder_);
    }
    if (bytes_.size() >= kWriteChunk) writeOut();
  }
  writeOut();
}

bool StreamWriter::writeOut() {
  const uint64_t records = encoder_.recordsWritten() - pending_base_;
  if (bytes_.empty()) return !output_failed_;
  bool ok = false;
  if (!output_failed_) {
    const int err = writeAll(fd_, bytes_.data(), bytes_.size());
    if (err == 0) {
      commit(records);
      ok = true;
    } else {
      records_lost_ += records;
      onOutputError(err);
    }
  } else {
    records_lost_ += records;
  }
  bytes_.clear();
  pending_base_ = encoder_.recordsWritten();
  return ok;
}

void StreamWriter::commit(uint64_t records) {
  bytes_in_file_ += bytes_.size();
  records_in_file_ += records;
  strings_in_file_ = encoder_.stringCount();
}

void StreamWriter::onOutputError(int err) {
  // Recording stops here: one stderr line, the records counted as lost
  // (Dropped, kDropWriter, written by writeFinal at exit if the disk lets
  // it). Part of the failed batch may be in the file: cut it back to the
  // last complete batch, so that the file stays a valid stream. Strings
  // interned since then are forgotten (their String records are not in the
  // file). Then one small Error record, if the disk takes it.
  output_failed_ = true;
  output_error_ = std::string(std::strerror(err)) + " (" + path_ + ")";
  std::fprintf(stderr, "streamscope: writing %s failed: %s; recording stops here\n", path_.c_str(), std::strerror(err));
  cut_ok_ = ftruncate(fd_, static_cast<off_t>(bytes_in_file_)) == 0 &&
            lseek(fd_, static_cast<off_t>(bytes_in_file_), SEEK_SET) == static_cast<off_t>(bytes_in_file_);
  if (!cut_ok_) {
    std::fprintf(stderr, "streamscope: cannot cut %s back to its last complete record: %s\n", path_.c_str(), std::strerror(errno));
    return;
  }
  encoder_.forgetStringsAbove(strings_in_file_);
  bytes_.clear();
  pending_base_ = encoder_.recordsWritten();
  rs::ErrorRecord e{};
  e.code = rs::kErrorOutput;
  e.message_sid = encoder_.intern("writing the record stream failed: " + output_error_ + "; the records after this one were not written");
  encoder_.write(e);
  if (writeAll(fd_, bytes_.data(), bytes_.size()) == 0) {
    commit(encoder_.recordsWritten() - pending_base_);
    error_record_in_file_ = true;
  } else {
    cut_ok_ = ftruncate(fd_, static_cast<off_t>(bytes_in_file_)) == 0 &&
              lseek(fd_, static_cast<off_t>(bytes_in_file_), SEEK_SET) == static_cast<off_t>(bytes_in_file_);
    encoder_.forgetStringsAbove(strings_in_file_);
  }
  // The caller clears bytes_ and moves pending_base_; the Error record is
  // not a lost one.
  pending_base_ = encoder_.recordsWritten();
}

}  // namespace streamscope
