// Reads a recording's timeline tables into column arrays sorted by start
// time, for the analysis (profiler/analysis/trace.ts, host.ts). Native
// because better-sqlite3 hands JS one object per row: ~0.8 µs a row, 8 s
// for 10 million operations, against ~0.1 µs here.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "row_rules.h"
#include "timeline_columns.h"

namespace streamscope::addon {

class LoadError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A row the load refuses (row_rules.h): the file's path, and what is wrong
// with it, naming the table, the row (rowid) and the column.
class MalformedRowError : public LoadError {
 public:
  MalformedRowError(const std::string& path, const std::string& problem)
      : LoadError(path + ": " + problem), path_(path), problem_(problem) {}
  const std::string& path() const { return path_; }
  const std::string& problem() const { return problem_; }

 private:
  std::string path_, problem_;
};

// A column of values that is not zeroed when allocated: the threads that
// read the parts write every slot they own, so the pages are first touched
// in parallel (zero-filling 1.2 GB of staging for 10 M operations and as
// many calls took one thread ~0.4 s before any row was read).
// Transparent huge pages (madvise) were tried for its memory: the
// kernel's compaction on each fault made the load of 10 M operations
// 1.5–2.5× slower on the development VM.
void* allocateColumn(size_t bytes);

template <class T>
class Column {
 public:
  using value_type = T;
  static_assert(std::is_trivially_default_constructible_v<T>, "plain numbers only");
  void allocate(size_t n) {
    data_.reset(static_cast<T*>(allocateColumn(n * sizeof(T))));  // not filled
    data_.get_deleter().owned = true;
    size_ = capacity_ = n;
  }
  // Rows written into memory the caller holds (a JS typed array of
  // `capacity` elements), as long as they fit (reuse: else the column
  // takes memory of its own, and the caller copies from it): the rows land
  // where they are read, with no copy of the columns and no second set of
  // pages (~1.2 GB for 10 M operations and calls). The caller keeps the
  // memory alive while the column is used, and never frees it through here.
  void borrow(T* data, size_t capacity) {
    data_.reset(data);
    data_.get_deleter().owned = false;
    size_ = 0;
    capacity_ = capacity;
  }
  // No memory (what it borrowed is let go, what it owned freed).
  void release() {
    data_.reset();
    data_.get_deleter().owned = true;
    size_ = capacity_ = 0;
  }
  bool borrowed() const { return data_ && !data_.get_deleter().owned; }
  // Like allocate, but keeps the memory it has when that is large enough:
  // a column loaded again and again (loadRows, one rank after another)
  // touches its pages once, not on every load (fresh pages cost ~2 s per GB
  // on a VM whose host takes freed memory back).
  void reuse(size_t n) {
    if (n > capacity_) allocate(n);
    size_ = n;
  }
  // Keeps the first n values (n <= size()).
  void truncate(size_t n) { size_ = n; }
  T& operator[](size_t i) { return data_.get()[i]; }
  const T& operator[](size_t i) const { return data_.get()[i]; }
  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }
  size_t size() const { return size_; }

 private:
  struct Free {
    bool owned = true;
    void operator()(T* p) const {
      if (owned) std::free(p);
    }
  };
  std::unique_ptr<T, Free> data_;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

// GPU operations of kernels, memcpys and memsets, in read order; `order`
// lists the rows in (start, kind, id) order. A column borrowed from the
// caller's JS array (Column::borrow) is put in that order where it is
// (the loader's placeInOrder); one of its own the binding gathers into its
// JS array in that order. The columns: timeline_columns.h.
struct OpColumns {
  // The rows by start: the read order's indexes (the identity where `in_order`).
  Column<uint32_t> order;
  bool in_order = false;
#define STREAMSCOPE_MEMBER(member, js, T) Column<T> member;
  STREAMSCOPE_OP_COLUMNS(STREAMSCOPE_MEMBER)
  size_t size() const { return kind.size(); }
};

// CUDA API calls in read order; `order` lists them in (start, id) order.
struct CallColumns {
  Column<uint32_t> order;
  bool in_order = false;
  STREAMSCOPE_CALL_COLUMNS(STREAMSCOPE_MEMBER)
#undef STREAMSCOPE_MEMBER
  size_t size() const { return start.size(); }
};

struct Timeline {
  OpColumns ops;
  CallColumns calls;
  // Rows read but left out (row_rules.h): how many, and the first.
  LeftOut left_out;
  // How the rows were read: "pages", or "sql: " and why not through the pages.
  std::string via;
};

// How to read the rows. Pages: straight from the file's table b-trees
// (btree_reader.h) under a read transaction, on all cores; where the file
// cannot be read that way (a live WAL, a record overflowing its page, a
// damaged page: Timeline::via says which), Auto
// reads the whole load through SQLite instead and Pages throws. Sql: SQLite
// alone, each part on its own connection (sqlite3_step, ~0.2 µs a row).
// STREAMSCOPE_LOAD_VIA=sql or =pages in the environment overrides Auto.
enum class LoadVia { Auto, Pages, Sql };

// Reads what is asked for, every table split into rowid parts read on all
// cores, then orders both by start.
// `progress`: where given, each part read adds its rows to it (atomically:
// another thread reads it while this runs, for the analysis's progress); set
// back to 0 where the pages fail and SQLite reads everything again.
// Every row read is checked, either way (row_rules.h): a row refused throws
// MalformedRowError, rows left out are counted in Timeline::left_out.
// `lend`: called on the columns before any row is read, to borrow the
// caller's arrays (Column::borrow); those that fit hold the rows, in start
// order, when the call returns.
using Lend = std::function<void(Timeline&)>;
Timeline loadTimeline(const std::string& db_path, bool want_ops, bool want_calls, LoadVia via = LoadVia::Auto, int32_t* progress = nullptr,
                      const Lend& lend = {});
OpColumns loadOps(const std::string& db_path);
// The same checks on every operation and call, keeping no column: throws
// MalformedRowError for a row refused; returns the rows left out.
LeftOut checkTimeline(const std::string& db_path);
CallColumns loadCalls(const std::string& db_path);

// Some rows of a recording, by rowid: a merged job's source (its source_rows),
// or a process's zones with `pids` set to it. The job analysis reads a job
// rank by rank with it (profiler/analysis/job.ts).
struct RowsRequest {
  // Inclusive rowid ranges per table: kernels, memcpys, memsets, api_calls.
  std::vector<std::pair<int64_t, int64_t>> ranges[4];
  // Only these processes' rows (an op's by its context); empty: every row of the ranges.
  std::vector<int32_t> pids;
  // Ops without the columns the job analysis does not read (correlation,
  // asynchrony, the kernels' shape: left 0), which SQLite then does not decode.
  bool narrow = false;
  // Threads to read on; 0: every core.
  size_t threads = 0;
  // Only rows that start at or before this (ops and calls).
  int64_t max_start = INT64_MAX;
  // Only the rows of these zones, per table: flat (lane, first_id, last_id)
  // triples, the lane an op's stream or a call's pid * 2^22 + tid (the ranges
  // may hold other lanes' rows, and the same lane's rows of other zones).
  // Empty: no such filter.
  std::vector<int64_t> zones[4];
  // Calls: only those named one of `call_names` or lasting `call_min_ns` or
  // more (both unset: every call).
  std::vector<int32_t> call_names;
  int64_t call_min_ns = -1;
  LoadVia via = LoadVia::Auto;
};

// Reads the request into columns of the calling thread's own, kept from one
// call to the next (Column::reuse), and orders them as loadTimeline does;
// `lend` as loadTimeline's (what an earlier call borrowed is let go first).
// Valid until the thread's next call.
Timeline& loadRows(const std::string& db_path, const RowsRequest& request, const Lend& lend = {});

// Runs task(0..n-1) on up to hardware_concurrency threads (or `max_threads`,
// when not 0); rethrows the first failure.
void runParallel(size_t n, const std::function<void(size_t)>& task, size_t max_threads = 0);

}  // namespace streamscope::addon
