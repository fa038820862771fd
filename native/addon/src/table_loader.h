// Reads a recording's timeline tables into column arrays sorted by start
// time, for the analysis (profiler/analysis/trace.ts, host.ts). Native
// because better-sqlite3 hands JS one object per row: ~0.8 µs a row, 8 s
// for 10 million operations, against ~0.1 µs here.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "timeline_columns.h"

namespace streamscope::addon {

class LoadError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A column of values that is not zeroed when allocated: the threads that
// read the parts write every slot they own, so the pages are first touched
// in parallel (zero-filling 1.2 GB of staging for 10 M operations and as
// many calls took one thread ~0.4 s before any row was read).
template <class T>
class Column {
 public:
  void allocate(size_t n) {
    data_.reset(new T[n]);  // default-initialised: no fill for plain numbers
    size_ = n;
  }
  // Keeps the first n values (n <= size()).
  void truncate(size_t n) { size_ = n; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }
  size_t size() const { return size_; }

 private:
  std::unique_ptr<T[]> data_;
  size_t size_ = 0;
};

// GPU operations of kernels, memcpys and memsets, in read order; `order`
// lists the rows in (start, kind, id) order. The binding writes each
// column straight into its JS array in that order: one pass, no second
// copy of 10 million rows. The columns: timeline_columns.h.
struct OpColumns {
  Column<uint32_t> order;
#define STREAMSCOPE_MEMBER(member, js, T) Column<T> member;
  STREAMSCOPE_OP_COLUMNS(STREAMSCOPE_MEMBER)
  size_t size() const { return kind.size(); }
};

// CUDA API calls in read order; `order` lists them in (start, id) order.
struct CallColumns {
  Column<uint32_t> order;
  STREAMSCOPE_CALL_COLUMNS(STREAMSCOPE_MEMBER)
#undef STREAMSCOPE_MEMBER
  size_t size() const { return start.size(); }
};

struct Timeline {
  OpColumns ops;
  CallColumns calls;
};

// Reads what is asked for, every table split into rowid parts read on all
// cores (each part on its own connection), then orders both by start.
Timeline loadTimeline(const std::string& db_path, bool want_ops, bool want_calls);
OpColumns loadOps(const std::string& db_path);
CallColumns loadCalls(const std::string& db_path);

// Runs task(0..n-1) on up to hardware_concurrency threads; rethrows the first failure.
void runParallel(size_t n, const std::function<void(size_t)>& task);

}  // namespace streamscope::addon
