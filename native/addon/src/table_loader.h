// Reads a recording's timeline tables into column arrays sorted by start
// time, for the analysis (profiler/analysis/trace.ts, host.ts). Native
// because better-sqlite3 hands JS one object per row: ~0.8 µs a row, 8 s
// for 10 million operations, against ~0.1 µs here.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace streamscope::addon {

class LoadError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// GPU operations of kernels, memcpys and memsets, in read order; `order`
// lists the rows in (start, kind, id) order. The binding writes each
// column straight into its JS array in that order: one pass, no second
// copy of 10 million rows.
struct OpColumns {
  std::vector<uint32_t> order;
  std::vector<uint8_t> kind;  // 1 kernel, 2 memcpy, 3 memset
  std::vector<double> row_id, start, end, bytes, blocks;
  std::vector<int32_t> stream, device, detail, pid, block_threads, registers, shared_bytes;
  std::vector<uint8_t> copy_kind, is_async;
  std::vector<uint32_t> correlation;
  size_t size() const { return kind.size(); }
};

// CUDA API calls in read order; `order` lists them in (start, id) order.
struct CallColumns {
  std::vector<uint32_t> order;
  std::vector<double> row_id, start, end;
  std::vector<int32_t> pid, tid, name_id;
  std::vector<uint32_t> correlation;
  std::vector<uint8_t> domain;
  size_t size() const { return start.size(); }
};

struct Timeline {
  OpColumns ops;
  CallColumns calls;
};

// Reads what is asked for, every table split into rowid parts read on all
// cores (each part on its own connection).
Timeline loadTimeline(const std::string& db_path, bool want_ops, bool want_calls);
OpColumns loadOps(const std::string& db_path);
CallColumns loadCalls(const std::string& db_path);

// Runs task(0..n-1) on up to hardware_concurrency threads; rethrows the first failure.
void runParallel(size_t n, const std::function<void(size_t)>& task);

}  // namespace streamscope::addon
