// SQLite's file format read directly: the database header, table b-tree
// pages walked in rowid order, records decoded
// (https://www.sqlite.org/fileformat2.html). Shared by the merge
// (page_merge.cc: every input's table rewritten page by page) and the column
// loader (table_loader.cc: the timeline tables read without SQLite's
// per-row cost). No SQLite here: the caller maps the file (the merge with
// mmap, the loader through SQLite's own map while it holds a read
// transaction) and says what a Damaged or Unsupported file means to it.
//
// The walk checks what it relies on, so that a damaged file can neither
// make it read outside the pages nor return rows in another order than
// SQLite would: every page number within the file, every cell and its
// pointer within its page, page types, each subtree's rowids within the
// bounds its parent's keys give, rowids rising.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace streamscope::addon::btree {

constexpr uint8_t kTableLeaf = 0x0D;
constexpr uint8_t kTableInterior = 0x05;
// The deepest b-tree a sane file has (SQLite's own limit is 20): a cycle in a damaged file stops here.
constexpr int kMaxDepth = 40;

// A file that is not what its b-tree says: a page beyond the end, a cell
// outside its page, rowids out of order. what(): "damaged …".
class Damaged : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A file in a form read here does not decode: a record that overflows its
// page, a text encoding other than UTF-8, a value of a type the caller
// cannot take. The caller falls back to SQLite (or refuses).
class Unsupported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline uint32_t get16(const uint8_t* p) { return (uint32_t(p[0]) << 8) | p[1]; }
inline uint32_t get32(const uint8_t* p) { return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | p[3]; }
inline void put16(uint8_t* p, uint32_t v) {
  p[0] = uint8_t(v >> 8);
  p[1] = uint8_t(v);
}
inline void put32(uint8_t* p, uint32_t v) {
  p[0] = uint8_t(v >> 24);
  p[1] = uint8_t(v >> 16);
  p[2] = uint8_t(v >> 8);
  p[3] = uint8_t(v);
}

// SQLite's varint: 1–9 bytes, big-endian, 7 bits a byte, the 9th byte whole.
// Returns the bytes read, 0 when it runs past `end`.
inline int getVarint(const uint8_t* p, const uint8_t* end, uint64_t* out) {
  if (p < end && p[0] < 0x80) {
    *out = p[0];
    return 1;
  }
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) {
    if (p + i >= end) return 0;
    v = (v << 7) | (p[i] & 0x7f);
    if ((p[i] & 0x80) == 0) {
      *out = v;
      return i + 1;
    }
  }
  if (p + 8 >= end) return 0;
  *out = (v << 8) | p[8];
  return 9;
}

inline int varintLen(uint64_t v) {
  if (v > 0x00ffffffffffffffULL) return 9;
  int n = 1;
  while (v >>= 7) n++;
  return n;
}

inline int putVarint(uint8_t* p, uint64_t v) {
  if (v > 0x00ffffffffffffffULL) {
    p[8] = uint8_t(v);
    v >>= 8;
    for (int i = 7; i >= 0; i--) {
      p[i] = uint8_t((v & 0x7f) | 0x80);
      v >>= 7;
    }
    return 9;
  }
  uint8_t tmp[10];
  int n = 0;
  do {
    tmp[n++] = uint8_t((v & 0x7f) | 0x80);
    v >>= 7;
  } while (v);
  tmp[0] &= 0x7f;
  for (int i = 0; i < n; i++) p[i] = tmp[n - 1 - i];
  return n;
}

// Serial types (the record format): 0 NULL, 1–6 integers of 1, 2, 3, 4, 6, 8
// bytes, 7 a REAL, 8 and 9 the integers 0 and 1, 10 and 11 reserved, then
// BLOBs (even) and TEXT (odd).
// Bytes of a value of serial type t in a record's body; -1: a reserved type (a damaged record).
inline int64_t serialLen(uint64_t t) {
  static const int8_t small[12] = {0, 1, 2, 3, 4, 6, 8, 8, 0, 0, -1, -1};
  if (t < 12) return small[t];
  return int64_t((t - 12) / 2);
}

inline bool isInteger(uint64_t t) { return (t >= 1 && t <= 6) || t == 8 || t == 9; }

// An integer of serial type t (isInteger) stored at p, sign-extended.
inline int64_t readInt(uint64_t t, const uint8_t* p) {
  switch (t) {
    case 1: return int8_t(p[0]);
    case 2: return int16_t(uint16_t(get16(p)));
    case 3: return int32_t(uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8) >> 8;
    case 4: return int32_t(get32(p));
    case 5: return int64_t(uint64_t(get16(p)) << 48 | uint64_t(get32(p + 2)) << 16) >> 16;
    case 6: return int64_t(uint64_t(get32(p)) << 32 | get32(p + 4));
    case 9: return 1;
    default:  // 8
      return 0;
  }
}

// A REAL (serial type 7) stored at p.
inline double readReal(const uint8_t* p) {
  const uint64_t bits = uint64_t(get32(p)) << 32 | get32(p + 4);
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

// A REAL as SQLite reads it as an integer (sqlite3RealToI64: truncated, clamped to 64 bits).
inline int64_t realToInt(double r) {
  if (r < -9223372036854774784.0) return INT64_MIN;
  if (r > +9223372036854774784.0) return INT64_MAX;
  return int64_t(r);
}

// The serial type SQLite gives an integer (sqlite3VdbeSerialType) and its body length.
inline uint64_t intSerialType(int64_t i, bool format4, int* len) {
  const uint64_t u = i < 0 ? ~uint64_t(i) : uint64_t(i);
  if (u <= 127) {
    if ((i & 1) == i && format4) {
      *len = 0;
      return 8 + uint64_t(i);
    }
    *len = 1;
    return 1;
  }
  if (u <= 32767) return *len = 2, 2;
  if (u <= 8388607) return *len = 3, 3;
  if (u <= 2147483647) return *len = 4, 4;
  if (u <= 0x00007fffffffffffULL) return *len = 6, 5;
  return *len = 8, 6;
}

inline void writeInt(uint8_t* p, int64_t v, int len) {
  for (int i = len - 1; i >= 0; i--) {
    p[i] = uint8_t(v);
    v = int64_t(uint64_t(v) >> 8);
  }
}

// A database file's pages in memory, as its header describes them.
struct Pages {
  const uint8_t* base = nullptr;
  uint32_t pageSize = 0;
  uint32_t usable = 0;  // bytes of each page b-trees use (the page less its reserved bytes)
  uint32_t count = 0;   // pages, as SQLite counts them (the header's count where valid, else the file's size)
  bool format4 = true;  // file format 4: the integers 0 and 1 take no body bytes

  // Reads the header of the `size` bytes at `base` (a whole file). Throws
  // Damaged (not a database, an impossible page size, a page count beyond
  // the file) or Unsupported (text not UTF-8).
  void init(const uint8_t* base, size_t size);

  // A table leaf cell's payload stays on its page up to this; beyond, it overflows.
  uint32_t maxLocal() const { return usable - 35; }

  const uint8_t* page(uint32_t pgno) const {
    if (pgno < 1 || pgno > count) throw Damaged("damaged b-tree (page " + std::to_string(pgno) + " beyond the file's end)");
    return base + size_t(pgno - 1) * pageSize;
  }
};

// A record's values in column order: `for (Record r(p, len); r.next();)`
// sees each column's serial type and value bytes. Throws Damaged where the
// header or a value runs past the payload.
class Record {
 public:
  Record(const uint8_t* p, uint32_t len) : end_(p + len) {
    uint64_t hdr = 0;
    const int n = getVarint(p, end_, &hdr);
    if (n == 0 || hdr > len || hdr < uint64_t(n)) throw Damaged("damaged record header");
    h_ = p + n;
    hEnd_ = p + hdr;
    value = hEnd_;
  }
  // Moves to the next column; false past the last one the record holds
  // (a record written before an ALTER TABLE ADD COLUMN holds fewer than the table).
  bool next() {
    value += valueLen;
    if (h_ >= hEnd_) return false;
    if (h_[0] < 0x80) {
      type = h_[0];
      h_++;
    } else {
      const int k = getVarint(h_, hEnd_, &type);
      if (k == 0) throw Damaged("damaged record header");
      h_ += k;
    }
    const int64_t len = serialLen(type);
    if (len < 0 || len > end_ - value) throw Damaged("damaged record");
    valueLen = uint32_t(len);
    return true;
  }
  uint64_t type = 0;
  const uint8_t* value;
  uint32_t valueLen = 0;

 private:
  const uint8_t* end_;
  const uint8_t* h_;
  const uint8_t* hEnd_;
};

// Asks the kernel to read the leaves of the table b-tree rooted at `root`
// that can hold rowids in [lo, hi] (MADV_WILLNEED over the mapped file,
// contiguous pages in one call), reading only its interior pages to find
// them: a file not in the page cache then reads all of them at the disk's
// speed while the walk decodes the first, where each leaf's first touch
// would otherwise wait for a read of its own (cold, the job's 64 generated
// ranks of 1 M operations summarized: bench/RESULTS.md). Every leaf is at
// the same depth (a b-tree's are), found down the rightmost path. A page the
// walk would refuse (a number beyond the file, a cell outside its page)
// stops it here; the walk refuses it when it gets there.
inline void readAhead(const Pages& pages, uint32_t root, int64_t lo, int64_t hi) {
  if (lo > hi) return;
  static const uintptr_t kOsPage = uintptr_t(sysconf(_SC_PAGESIZE) > 0 ? sysconf(_SC_PAGESIZE) : 4096);
  const uint32_t usable = pages.usable;
  auto valid = [&](uint32_t pgno) { return pgno >= 1 && pgno <= pages.count; };
  auto header = [&](uint32_t pgno) { return pages.page(pgno) + (pgno == 1 ? 100 : 0); };
  // Interior cell i's left child and key; i == cells: the right child (its key above every rowid).
  auto childOf = [&](const uint8_t* hdr, uint32_t i, uint32_t cells, uint32_t* child, int64_t* key) {
    if (i == cells) {
      *child = get32(hdr + 8);
      *key = INT64_MAX;
      return true;
    }
    const uint8_t* page = hdr - (hdr - pages.base) % pages.pageSize;
    const uint32_t at = get16(hdr + 12 + 2 * i);
    uint64_t k = 0;
    if (at + 5 > usable || getVarint(page + at + 4, page + usable, &k) == 0) return false;
    *child = get32(page + at);
    *key = int64_t(k);
    return true;
  };
  // The leaves' depth, down the rightmost path.
  int leafDepth = 0;
  for (uint32_t pgno = root;; leafDepth++) {
    if (!valid(pgno) || leafDepth > kMaxDepth) return;
    const uint8_t* hdr = header(pgno);
    if (hdr[0] != kTableInterior) break;
    pgno = get32(hdr + 8);
  }
  if (leafDepth == 0) return;
  uintptr_t runStart = 0, runEnd = 0;
  auto flush = [&] {
    if (runEnd > runStart) madvise(reinterpret_cast<void*>(runStart), runEnd - runStart, MADV_WILLNEED);
  };
  auto ask = [&](uint32_t pgno) {
    const uintptr_t a = reinterpret_cast<uintptr_t>(pages.base + size_t(pgno - 1) * pages.pageSize) & ~(kOsPage - 1);
    const uintptr_t b = reinterpret_cast<uintptr_t>(pages.base + size_t(pgno) * pages.pageSize);
    if (a >= runStart && a <= runEnd) {
      runEnd = std::max(runEnd, b);
    } else {
      flush();
      runStart = a;
      runEnd = b;
    }
  };
  // Depth first over the interior pages whose keys reach [lo, hi], in key order.
  struct Node {
    uint32_t pgno;
    int depth;
  };
  std::vector<Node> stack{{root, 0}};
  std::vector<uint32_t> children;
  // No more pages than the file has: a damaged file whose pages list one another again and again stops here.
  size_t budget = pages.count;
  while (!stack.empty() && budget-- > 0) {
    const Node n = stack.back();
    stack.pop_back();
    if (!valid(n.pgno)) break;
    const uint8_t* hdr = header(n.pgno);
    if (hdr[0] != kTableInterior) continue;
    const uint32_t cells = get16(hdr + 3);
    if (size_t(hdr - pages.page(n.pgno)) + 12 + 2 * size_t(cells) > usable) break;
    children.clear();
    int64_t below = INT64_MIN;  // the keys of the cells before: the child's rowids lie above
    for (uint32_t i = 0; i <= cells; i++) {
      uint32_t child;
      int64_t key;
      if (!childOf(hdr, i, cells, &child, &key) || !valid(child)) return flush();
      if (key >= lo && below < hi) children.push_back(child);
      if (key >= hi) break;
      below = key;
    }
    if (n.depth + 1 == leafDepth) {
      for (uint32_t c : children) ask(c);
    } else if (n.depth + 1 < leafDepth) {
      // Pushed last first: popped in key order.
      for (size_t k = children.size(); k-- > 0;) stack.push_back({children[k], n.depth + 1});
    }
  }
  flush();
}

// The cells of the table b-tree rooted at `root` whose rowids lie in
// [lo, hi], in rowid order: cell(rowid, payload, payloadLen) for each.
// Descends to lo as SQLite's seek does (an interior cell's key is the
// largest rowid of its left child), then walks the leaves onwards. Throws
// Damaged (above) or Unsupported (a record that overflows its page: its
// payload is not all on the leaf).
template <class F>
void scanTable(const Pages& pages, uint32_t root, int64_t lo, int64_t hi, F&& cell) {
  if (lo > hi) return;
  struct Frame {
    const uint8_t* page;
    const uint8_t* hdr;
    uint32_t cells;
    uint32_t next;       // the next child to visit (cells: the right child)
    __int128 low, high;  // its rowids lie in (low, high]
  };
  Frame stack[kMaxDepth + 1];
  int depth = 0;
  const uint32_t usable = pages.usable;
  const uint32_t maxLocal = pages.maxLocal();
  auto open = [&](uint32_t pgno, __int128 low, __int128 high) -> Frame& {
    if (depth > kMaxDepth) throw Damaged("damaged b-tree (too deep: a cycle)");
    Frame& f = stack[depth++];
    f.page = pages.page(pgno);
    f.hdr = f.page + (pgno == 1 ? 100 : 0);
    f.cells = get16(f.hdr + 3);
    f.next = 0;
    f.low = low;
    f.high = high;
    const uint32_t ptrs = f.hdr[0] == kTableInterior ? 12 : 8;
    if (f.hdr[0] != kTableInterior && f.hdr[0] != kTableLeaf) throw Damaged("damaged b-tree page (not a table page)");
    if (size_t(f.hdr - f.page) + ptrs + 2 * size_t(f.cells) > usable) throw Damaged("damaged b-tree page (too many cells)");
    return f;
  };
  // Interior cell i: its left child and key.
  auto interior = [&](const Frame& f, uint32_t i, uint32_t* child, int64_t* key) {
    const uint32_t at = get16(f.hdr + 12 + 2 * i);
    uint64_t k = 0;
    if (at + 5 > usable || getVarint(f.page + at + 4, f.page + usable, &k) == 0) throw Damaged("damaged interior page");
    *child = get32(f.page + at);
    *key = int64_t(k);
  };
  // Leaf cell c: its rowid, payload and length.
  auto leafCell = [&](const Frame& f, uint32_t c, int64_t* rowid, const uint8_t** payload, uint32_t* len) {
    const uint32_t at = get16(f.hdr + 8 + 2 * c);
    if (at >= usable) throw Damaged("damaged leaf page");
    const uint8_t* p = f.page + at;
    const uint8_t* limit = f.page + usable;
    uint64_t n = 0, r = 0;
    int k = getVarint(p, limit, &n);
    if (k == 0) throw Damaged("damaged cell");
    p += k;
    k = getVarint(p, limit, &r);
    if (k == 0) throw Damaged("damaged cell");
    p += k;
    if (n > maxLocal) throw Unsupported("a record overflows its page");
    if (n > uint64_t(limit - p)) throw Damaged("damaged cell");
    *rowid = int64_t(r);
    *payload = p;
    *len = uint32_t(n);
  };
  const __int128 none_low = __int128(INT64_MIN) - 1, none_high = __int128(INT64_MAX);
  open(root, none_low, none_high);
  bool seeking = true;  // on the way down to lo
  bool any = false;
  int64_t prev = 0;
  while (depth > 0) {
    Frame& f = stack[depth - 1];
    if (f.hdr[0] == kTableInterior) {
      if (seeking) {
        // The first cell whose key is at or above lo (its left child holds lo, if anything does).
        uint32_t a = 0, b = f.cells;
        while (a < b) {
          const uint32_t m = (a + b) / 2;
          uint32_t child;
          int64_t key;
          interior(f, m, &child, &key);
          if (key < lo) a = m + 1;
          else b = m;
        }
        f.next = a;
      }
      if (f.next > f.cells) {
        depth--;
        continue;
      }
      uint32_t child;
      __int128 low = f.low, high = f.high;
      if (f.next > 0) {
        int64_t key;
        interior(f, f.next - 1, &child, &key);
        low = key;
      }
      if (f.next < f.cells) {
        int64_t key;
        interior(f, f.next, &child, &key);
        high = key;
      } else {
        child = get32(f.hdr + 8);
      }
      if (low > high || low < f.low || high > f.high) throw Damaged("damaged b-tree (keys out of order)");
      f.next++;
      open(child, low, high);
      continue;
    }
    // A leaf: from lo (where seeking), each cell in turn.
    uint32_t c = 0;
    if (seeking) {
      uint32_t a = 0, b = f.cells;
      while (a < b) {
        const uint32_t m = (a + b) / 2;
        int64_t rowid;
        const uint8_t* p;
        uint32_t len;
        leafCell(f, m, &rowid, &p, &len);
        if (rowid < lo) a = m + 1;
        else b = m;
      }
      c = a;
      seeking = false;
    }
    for (; c < f.cells; c++) {
      int64_t rowid;
      const uint8_t* p;
      uint32_t len;
      leafCell(f, c, &rowid, &p, &len);
      if (rowid <= f.low || rowid > f.high || (any && rowid <= prev)) throw Damaged("damaged b-tree (rowids out of order)");
      if (rowid > hi) return;
      any = true;
      prev = rowid;
      cell(rowid, p, len);
    }
    depth--;
  }
}

}  // namespace streamscope::addon::btree
