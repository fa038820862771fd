#include "page_merge.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "btree_reader.h"

namespace streamscope::addon {
namespace {

using btree::get16;
using btree::get32;
using btree::intSerialType;
using btree::isInteger;
using btree::kTableInterior;
using btree::kTableLeaf;
using btree::put16;
using btree::put32;
using btree::putVarint;
using btree::readInt;
using btree::varintLen;
using btree::writeInt;

bool addOverflows(int64_t a, int64_t b, int64_t* out) { return __builtin_add_overflow(a, b, out); }

std::string errnoText() { return std::strerror(errno); }

// A file mapped read-only, and unmapped with it: also where what is built
// on it throws while being built (an Input whose header is refused, which
// no destructor of Input would unmap). The descriptor is closed once the
// file is mapped: the mapping does not need it, and a merge of many ranks
// then holds no descriptor per input.
class Mapping {
 public:
  explicit Mapping(const std::string& file) {
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw PageMergeError(file + ": cannot open: " + errnoText());
    std::string why;
    struct stat st {};
    if (fstat(fd, &st) != 0) {
      why = "cannot stat: " + errnoText();
    } else if (size_t(st.st_size) < 512) {
      why = "too short to be a SQLite database";
    } else {
      void* p = mmap(nullptr, size_t(st.st_size), PROT_READ, MAP_SHARED, fd, 0);
      if (p == MAP_FAILED) {
        why = "cannot map: " + errnoText();
      } else {
        data_ = static_cast<const uint8_t*>(p);
        size_ = size_t(st.st_size);
      }
    }
    ::close(fd);
    if (!why.empty()) throw PageMergeError(file + ": " + why);
  }
  ~Mapping() { munmap(const_cast<uint8_t*>(data_), size_); }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

// An input recording: its bytes, and its pages read through `pages` (whose
// base is where the mapping starts).
struct Input {
  std::string file;
  Mapping map;
  btree::Pages pages;

  explicit Input(std::string path) : file(std::move(path)), map(file) {
    try {
      pages.init(map.data(), map.size());
    } catch (const btree::Unsupported& e) {
      throw PageMergeUnsupported(file + ": " + e.what());
    } catch (const btree::Damaged& e) {
      throw PageMergeError(file + ": " + e.what());
    }
  }
};

// The output: its header facts, its pages handed out to the threads.
struct Output {
  std::string file;
  int fd = -1;
  uint32_t pageSize = 0;
  uint32_t usable = 0;
  bool format4 = true;
  uint8_t header[100] = {};
  std::atomic<uint32_t> nextPage{0};
  // The page holding byte 2^30 (SQLite's pending-byte page, which its file
  // locks use on every platform): never a b-tree's, so never handed out.
  uint32_t lockPage = 0;

  explicit Output(std::string path) : file(std::move(path)) {
    fd = ::open(file.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) throw PageMergeError(file + ": cannot open: " + errnoText());
    if (pread(fd, header, 100, 0) != 100) throw PageMergeError(file + ": cannot read its header");
    if (std::memcmp(header, "SQLite format 3", 16) != 0) throw PageMergeError(file + ": not a SQLite database");
    pageSize = get16(header + 16) == 1 ? 65536 : get16(header + 16);
    usable = pageSize - header[20];
    format4 = get32(header + 44) >= 4;
    if (get32(header + 56) != 1) throw PageMergeUnsupported(file + ": text is not UTF-8");
    if (get32(header + 52) != 0) throw PageMergeUnsupported(file + ": auto-vacuum databases keep pointer maps");
    struct stat st {};
    if (fstat(fd, &st) != 0) throw PageMergeError(file + ": cannot stat: " + errnoText());
    // The header's page count holds when it was written by the version that last changed the file.
    const uint32_t pages =
        get32(header + 92) == get32(header + 24) && get32(header + 28) > 0 ? get32(header + 28) : uint32_t(st.st_size / pageSize);
    nextPage = pages + 1;
    lockPage = uint32_t(0x40000000u / pageSize) + 1;
  }

  // The next page to write: one past the last, skipping the lock page.
  uint32_t allocate() {
    uint32_t pgno = nextPage.fetch_add(1);
    if (pgno == lockPage) pgno = nextPage.fetch_add(1);
    return pgno;
  }
  ~Output() {
    if (fd >= 0) ::close(fd);
  }
  Output(const Output&) = delete;
  Output& operator=(const Output&) = delete;

  void write(uint32_t pgno, const uint8_t* data) const {
    const off_t at = off_t(pgno - 1) * pageSize;
    size_t done = 0;
    while (done < pageSize) {
      const ssize_t n = pwrite(fd, data + done, pageSize - done, at + off_t(done));
      if (n < 0) {
        if (errno == EINTR) continue;
        throw PageMergeError(file + ": cannot write: " + errnoText());
      }
      done += size_t(n);
    }
  }
  void read(uint32_t pgno, uint8_t* data) const {
    if (pread(fd, data, pageSize, off_t(pgno - 1) * pageSize) != ssize_t(pageSize))
      throw PageMergeError(file + ": cannot read back a page");
  }
};

// A leaf page written, for the interior levels: its page and its largest rowid.
struct Child {
  uint32_t pgno;
  int64_t lastRowid;
};

// Table leaf pages filled cell by cell (cells from the end of the page
// down, their pointers after the 8-byte header), each written when full.
class LeafWriter {
 public:
  LeafWriter(Output& out, std::vector<Child>& written) : out_(out), written_(written), page_(out.pageSize, 0) { reset(); }

  void add(const uint8_t* payload, uint32_t payloadLen, int64_t rowid) {
    const uint32_t len = std::max<uint32_t>(4, uint32_t(varintLen(payloadLen) + varintLen(uint64_t(rowid)) + payloadLen));
    if (content_ < 8 + 2 * (cells_ + 1) + len) flush();
    content_ -= len;
    uint8_t* c = page_.data() + content_;
    c += putVarint(c, payloadLen);
    c += putVarint(c, uint64_t(rowid));
    std::memcpy(c, payload, payloadLen);
    put16(page_.data() + 8 + 2 * cells_, content_);
    cells_++;
    last_ = rowid;
  }

  void flush() {
    if (cells_ == 0) return;
    uint8_t* p = page_.data();
    p[0] = kTableLeaf;
    put16(p + 1, 0);  // no freeblocks
    put16(p + 3, cells_);
    put16(p + 5, content_ == 65536 ? 0 : content_);
    p[7] = 0;  // no fragmented bytes
    const uint32_t pgno = out_.allocate();
    out_.write(pgno, p);
    written_.push_back({pgno, last_});
    reset();
  }

 private:
  void reset() {
    std::fill(page_.begin(), page_.end(), 0);
    cells_ = 0;
    content_ = out_.usable;
  }
  Output& out_;
  std::vector<Child>& written_;
  std::vector<uint8_t> page_;
  uint32_t cells_ = 0;
  uint32_t content_ = 0;
  int64_t last_ = 0;
};

// One column's operation, ready for millions of lookups: a dense table when the keys are small.
struct PreparedOp {
  ColumnOp::Kind kind = ColumnOp::Keep;
  int64_t add = 0;
  bool keepOthers = true;
  std::vector<std::pair<int64_t, int64_t>> pairs;
  int64_t denseMin = 0;
  std::vector<int64_t> dense;  // new value, or kAbsent
  std::vector<uint8_t> present;

  explicit PreparedOp(const ColumnOp& op) : kind(op.kind), add(op.add), keepOthers(op.keepOthers), pairs(op.pairs) {
    std::sort(pairs.begin(), pairs.end());
    if (kind == ColumnOp::Map && !pairs.empty()) {
      const int64_t lo = pairs.front().first;
      const int64_t hi = pairs.back().first;
      if (hi - lo < (int64_t(1) << 22)) {
        denseMin = lo;
        dense.assign(size_t(hi - lo + 1), 0);
        present.assign(size_t(hi - lo + 1), 0);
        for (const auto& [a, b] : pairs) {
          dense[size_t(a - lo)] = b;
          present[size_t(a - lo)] = 1;
        }
      }
    }
  }

  // false: the value maps to NULL.
  bool map(int64_t v, int64_t* out) const {
    if (!dense.empty()) {
      if (v >= denseMin && v - denseMin < int64_t(dense.size()) && present[size_t(v - denseMin)]) {
        *out = dense[size_t(v - denseMin)];
        return true;
      }
    } else {
      auto it = std::lower_bound(pairs.begin(), pairs.end(), std::make_pair(v, INT64_MIN));
      if (it != pairs.end() && it->first == v) {
        *out = it->second;
        return true;
      }
    }
    *out = v;
    return keepOthers;
  }
};

// One (table, input): its records rewritten into leaf pages.
struct Unit {
  size_t table = 0;
  size_t input = 0;
  const Input* in = nullptr;
  uint32_t root = 0;
  int64_t rowidAdd = 0;
  std::vector<PreparedOp> ops;
  std::string tableName;
  // Results.
  std::vector<Child> leaves;
  PageMergeInputResult result;
};

class RecordRewriter {
 public:
  RecordRewriter(Unit& u, bool format4, uint32_t maxLocal) : u_(u), format4_(format4), maxLocal_(maxLocal) {
    types_.reserve(64);
    body_.resize(maxLocal_ + 16);
    rec_.resize(maxLocal_ + 16);
  }

  // The record at p (payloadLen bytes) rewritten; returns its new length (in rec()).
  uint32_t rewrite(const uint8_t* p, uint32_t payloadLen) {
    types_.clear();
    size_t bodyLen = 0;
    size_t col = 0;
    for (btree::Record r(p, payloadLen); r.next(); col++) {
      const uint64_t t = r.type;
      if (col >= u_.ops.size()) unsupported("a record has more columns than the table");
      const PreparedOp& op = u_.ops[col];
      if (op.kind == ColumnOp::Keep || t == 0) {
        // Copied as stored (NULL stays NULL under every operation: NULL + x, and no key is NULL).
        types_.push_back(t);
        std::memcpy(body_.data() + bodyLen, r.value, r.valueLen);
        bodyLen += r.valueLen;
      } else {
        if (!isInteger(t)) unsupported("a column to move holds a value that is not an integer");
        const int64_t v = readInt(t, r.value);
        int64_t w = 0;
        bool isNull = false;
        if (op.kind == ColumnOp::Add) {
          if (addOverflows(v, op.add, &w)) unsupported("a moved value overflows 64 bits");
        } else {
          isNull = !op.map(v, &w);
        }
        if (isNull) {
          types_.push_back(0);
        } else {
          int wl = 0;
          types_.push_back(intSerialType(w, format4_, &wl));
          writeInt(body_.data() + bodyLen, w, wl);
          bodyLen += size_t(wl);
        }
      }
      if (bodyLen + 16 > body_.size()) unsupported("a record does not fit in its page");
    }
    // Columns the record lacks (added to the table after it was written) read as their default: fine to keep only if copied.
    for (size_t c = col; c < u_.ops.size(); c++)
      if (u_.ops[c].kind != ColumnOp::Keep) unsupported("a record lacks a column to move (written before the column was added)");
    size_t typesLen = 0;
    for (uint64_t t : types_) typesLen += size_t(varintLen(t));
    size_t hs = typesLen + 1;
    while (size_t(varintLen(hs)) != hs - typesLen) hs = typesLen + size_t(varintLen(hs));
    const size_t total = hs + bodyLen;
    if (total > maxLocal_) unsupported("a rewritten record would overflow its page");
    uint8_t* o = rec_.data();
    o += putVarint(o, hs);
    for (uint64_t t : types_) o += putVarint(o, t);
    std::memcpy(o, body_.data(), bodyLen);
    return uint32_t(total);
  }

  const uint8_t* rec() const { return rec_.data(); }

  [[noreturn]] static void unsupported(const char* what) { throw btree::Unsupported(what); }

 private:
  Unit& u_;
  bool format4_;
  uint32_t maxLocal_;
  std::vector<uint64_t> types_;
  std::vector<uint8_t> body_;
  std::vector<uint8_t> rec_;
};

void runUnit(Unit& u, Output& out) {
  const Input& in = *u.in;
  RecordRewriter rw(u, out.format4, out.usable - 35);
  LeafWriter leaves(out, u.leaves);
  try {
    btree::scanTable(in.pages, u.root, INT64_MIN, INT64_MAX, [&](int64_t rowid, const uint8_t* p, uint32_t payload) {
      int64_t id = 0;
      if (addOverflows(rowid, u.rowidAdd, &id)) throw btree::Unsupported("a moved rowid overflows 64 bits");
      const uint32_t len = rw.rewrite(p, payload);
      leaves.add(rw.rec(), len, id);
      if (u.result.rows == 0) u.result.firstRowid = id;
      u.result.lastRowid = id;
      u.result.rows++;
    });
  } catch (const btree::Damaged& e) {
    throw PageMergeError(in.file + ": " + e.what() + " in table " + u.tableName);
  } catch (const btree::Unsupported& e) {
    throw PageMergeUnsupported(in.file + ", table " + u.tableName + ": " + e.what());
  }
  leaves.flush();
}

// Interior pages over `children` (one level), each holding as many as
// fit; the last level goes into `root`. Pages a table's tree does not use
// (its only leaf, copied into the root) go to `freed`.
void buildTree(Output& out, uint32_t root, std::vector<Child> level, std::vector<uint32_t>& freed) {
  if (level.empty()) return;  // the root stays the empty leaf SQLite made
  std::vector<uint8_t> page(out.pageSize, 0);
  if (level.size() == 1) {
    out.read(level[0].pgno, page.data());
    out.write(root, page.data());
    freed.push_back(level[0].pgno);
    return;
  }
  // Children per interior page: a cell is a 4-byte page number and a rowid varint (≤ 9 bytes), plus its 2-byte pointer.
  const size_t fit = (out.usable - 12) / (4 + 9 + 2) + 1;
  auto writeInterior = [&](const Child* c, size_t n, uint32_t pgno) {
    std::fill(page.begin(), page.end(), 0);
    uint8_t* p = page.data();
    uint32_t content = out.usable;
    for (size_t i = 0; i + 1 < n; i++) {
      uint8_t cell[13];
      put32(cell, c[i].pgno);
      const int len = 4 + putVarint(cell + 4, uint64_t(c[i].lastRowid));
      content -= uint32_t(len);
      std::memcpy(p + content, cell, size_t(len));
      put16(p + 12 + 2 * i, content);
    }
    p[0] = kTableInterior;
    put16(p + 3, uint32_t(n - 1));
    put16(p + 5, content == 65536 ? 0 : content);
    put32(p + 8, c[n - 1].pgno);
    out.write(pgno, p);
  };
  while (level.size() > fit) {
    // Split evenly, so that no page is left with a single child.
    const size_t pages = (level.size() + fit - 1) / fit;
    std::vector<Child> up;
    size_t from = 0;
    for (size_t k = 0; k < pages; k++) {
      const size_t to = level.size() * (k + 1) / pages;
      const uint32_t pgno = out.allocate();
      writeInterior(level.data() + from, to - from, pgno);
      up.push_back({pgno, level[to - 1].lastRowid});
      from = to;
    }
    level = std::move(up);
  }
  writeInterior(level.data(), level.size(), root);
}

}  // namespace

PageMergeResult appendTablePages(const std::string& output, const std::vector<PageMergeTable>& tables) {
  Output out(output);
  // Each input file mapped once, whatever number of tables it brings.
  std::map<std::string, std::unique_ptr<Input>> files;
  std::vector<Unit> units;
  for (size_t t = 0; t < tables.size(); t++) {
    for (size_t i = 0; i < tables[t].inputs.size(); i++) {
      const PageMergeInput& pi = tables[t].inputs[i];
      auto& in = files[pi.file];
      if (!in) in = std::make_unique<Input>(pi.file);
      Unit u;
      u.table = t;
      u.input = i;
      u.in = in.get();
      u.root = pi.root;
      u.rowidAdd = pi.rowidAdd;
      u.tableName = tables[t].name;
      for (const ColumnOp& op : pi.columns) u.ops.emplace_back(op);
      units.push_back(std::move(u));
    }
  }

  // The units on all cores, taken in turn; the first error stops the others.
  const size_t threads = std::max<size_t>(1, std::min<size_t>(units.size(), std::max(1u, std::thread::hardware_concurrency())));
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex errorLock;
  auto work = [&]() {
    for (;;) {
      const size_t k = next.fetch_add(1);
      if (k >= units.size() || failed) return;
      try {
        runUnit(units[k], out);
      } catch (...) {
        std::lock_guard<std::mutex> g(errorLock);
        if (!error) error = std::current_exception();
        failed = true;
        return;
      }
    }
  };
  std::vector<std::thread> pool;
  for (size_t w = 1; w < threads; w++) pool.emplace_back(work);
  work();
  for (auto& th : pool) th.join();
  if (error) std::rethrow_exception(error);

  PageMergeResult result;
  result.threads = int(threads);
  result.rows.resize(tables.size());
  for (size_t t = 0; t < tables.size(); t++) result.rows[t].resize(tables[t].inputs.size());
  std::vector<std::vector<Child>> leaves(tables.size());
  // Per table, the last rowid of the inputs before (none while they had no rows).
  std::vector<std::optional<int64_t>> lastOf(tables.size());
  for (Unit& u : units) {  // in table, then input order
    if (u.result.rows > 0) {
      const std::optional<int64_t>& last = lastOf[u.table];
      if (last && u.result.firstRowid <= *last)
        throw PageMergeError(u.in->file + ": its rows of " + u.tableName + " would land among an earlier input's (ids " +
                             std::to_string(u.result.firstRowid) + " ≤ " + std::to_string(*last) + ")");
      lastOf[u.table] = u.result.lastRowid;
    }
    result.rows[u.table][u.input] = u.result;
    leaves[u.table].insert(leaves[u.table].end(), u.leaves.begin(), u.leaves.end());
  }
  std::vector<uint32_t> freed;
  for (size_t t = 0; t < tables.size(); t++) buildTree(out, tables[t].root, std::move(leaves[t]), freed);

  // The header: the new page count, pages left unused on the free list (each a trunk page without leaves), the change counter.
  const uint32_t pages = out.nextPage.load() - 1;
  uint32_t freeTrunk = get32(out.header + 32);
  uint32_t freeCount = get32(out.header + 36);
  std::vector<uint8_t> page(out.pageSize, 0);
  for (auto it = freed.rbegin(); it != freed.rend(); ++it) {
    std::fill(page.begin(), page.end(), 0);
    put32(page.data(), freeTrunk);
    out.write(*it, page.data());
    freeTrunk = *it;
    freeCount++;
  }
  uint8_t* h = out.header;
  const uint32_t counter = get32(h + 24) + 1;
  put32(h + 24, counter);
  put32(h + 28, pages);
  put32(h + 32, freeTrunk);
  put32(h + 36, freeCount);
  put32(h + 92, counter);
  if (pwrite(out.fd, h, 100, 0) != 100) throw PageMergeError(output + ": cannot write its header: " + errnoText());
  if (ftruncate(out.fd, off_t(pages) * out.pageSize) != 0) throw PageMergeError(output + ": cannot set its size: " + errnoText());
  result.pagesWritten = pages;
  return result;
}

}  // namespace streamscope::addon
