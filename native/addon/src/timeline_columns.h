// The columns of the column loader's results (loadOps, loadCalls,
// loadTimeline): the one list of each column's C++ member, JS name and
// element type.
//
// The C++ structs (table_loader.h), the loops over every column
// (table_loader.cc) and the JS objects handed to the analysis (addon.cc) are
// all expanded from these lists, so they cannot disagree. TypeScript cannot
// read a C++ header, so profiler/native/addon.ts spells the same lists out
// (OP_COLUMNS, CALL_COLUMNS) and derives its types from them; the addon
// exports these lists as `timelineColumns`, and
// test/addon/timeline-columns.test.ts fails when the two differ in a name or
// a type. (A generated TypeScript file would need a generator run on every
// change; this way a drift is one failing test that names the column.)
//
// X(member, "jsName", element type). A new column also needs its value for
// every row in table_loader.cc (readOps for each of the three tables,
// readCalls): Column<T> is not zeroed.
#pragma once

#include <cstdint>

// GPU operations of kernels, memcpys and memsets.
#define STREAMSCOPE_OP_COLUMNS(X)                                                                           \
  X(kind, "kind", uint8_t) /* 1 kernel, 2 memcpy, 3 memset */                                               \
  X(row_id, "rowId", double)                                                                                \
  X(start, "start", double)                                                                                 \
  X(end, "end", double)                                                                                     \
  X(stream, "stream", int32_t)                                                                              \
  X(device, "device", int32_t)                                                                              \
  X(bytes, "bytes", double)                                                                                 \
  X(detail, "detail", int32_t) /* kernel: name_id; memcpy: src_kind * 16 + dst_kind; memset: memory_kind */ \
  X(copy_kind, "copyKind", uint8_t)                                                                         \
  X(correlation, "correlation", uint32_t)                                                                   \
  X(pid, "pid", int32_t)                                                                                    \
  X(is_async, "isAsync", uint8_t)                                                                           \
  X(blocks, "blocks", double)                                                                               \
  X(block_threads, "blockThreads", int32_t)                                                                 \
  X(registers, "registers", int32_t)                                                                        \
  X(shared_bytes, "sharedBytes", int32_t)

// CUDA API calls.
#define STREAMSCOPE_CALL_COLUMNS(X)       \
  X(row_id, "rowId", double)              \
  X(start, "start", double)               \
  X(end, "end", double)                   \
  X(pid, "pid", int32_t)                  \
  X(tid, "tid", int32_t)                  \
  X(name_id, "nameId", int32_t)           \
  X(correlation, "correlation", uint32_t) \
  X(domain, "domain", uint8_t)
