// The big tables of a merge written as SQLite pages (profiler/merge/merge.ts,
// issue 13 part 5). A merge rewrites a few columns of every row of every
// input (ids, times, pids, devices, contexts, streams, strings move) and
// writes them into one file. SQLite does that one row at a time from one
// thread, through its b-tree: 22–27 CPU seconds for the 128 M rows of a
// 64-rank job on the development VM before any rewriting, with nothing left
// for the second core to do. Here every input's table b-tree is read from
// its file as pages, each record rewritten by the column operations the
// merge's plan gave, and the records packed into leaf pages appended to the
// output on all cores; the interior pages are built last, the table's root
// page overwritten with the top level. Only tables without indexes (the
// merge drops them for the load and SQLite builds them afterwards) and
// only records SQLite itself would read back identically (integers moved,
// everything else copied byte for byte); anything else is refused as
// Unsupported, and the merge starts its output again and copies with SQL.
//
// The file format: https://www.sqlite.org/fileformat2.html (b-tree pages,
// cells, the record format, the database header).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace streamscope::addon {

// A file this cannot merge as pages (a record that overflows its page, a
// column to move that is not an integer, another text encoding): the
// caller starts the output again and merges it with SQL.
class PageMergeUnsupported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A damaged input or an output that cannot be written.
class PageMergeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What happens to one column of a record.
struct ColumnOp {
  enum Kind { Keep, Add, Map } kind = Keep;
  int64_t add = 0;
  // Map: old → new, sorted by old; a value not listed stays (keepOthers) or becomes NULL.
  std::vector<std::pair<int64_t, int64_t>> pairs;
  bool keepOthers = true;
};

struct PageMergeInput {
  std::string file;
  // The table's root page in that file (sqlite_schema.rootpage).
  uint32_t root = 0;
  // Added to every rowid (the table's INTEGER PRIMARY KEY).
  int64_t rowidAdd = 0;
  // One per column of the table, in the table's order (the id column's is
  // ignored: SQLite stores NULL there and the rowid in the cell).
  std::vector<ColumnOp> columns;
};

struct PageMergeTable {
  std::string name;
  // Its root page in the output: an empty leaf, overwritten at the end.
  uint32_t root = 0;
  // In output order: their rowids, once moved, must rise from one to the next.
  std::vector<PageMergeInput> inputs;
};

struct PageMergeInputResult {
  int64_t rows = 0;
  int64_t firstRowid = 0;  // after the move; meaningful when rows > 0
  int64_t lastRowid = 0;
};

struct PageMergeResult {
  // [table][input]
  std::vector<std::vector<PageMergeInputResult>> rows;
  uint32_t pagesWritten = 0;
  int threads = 0;
};

// Appends every table's rows to `output` (a database no connection holds
// open), as described above. Throws PageMergeUnsupported or PageMergeError;
// the output is then unusable (the caller deletes it).
PageMergeResult appendTablePages(const std::string& output, const std::vector<PageMergeTable>& tables);

}  // namespace streamscope::addon
