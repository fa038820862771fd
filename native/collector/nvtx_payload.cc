// Types only: this file implements none of NVTX's functions.
#define NVTX_NO_IMPL
#include "nvtx_payload.h"

#include <cstring>

#include <nvtx3/nvToolsExtPayload.h>

namespace streamscope::nvtx_payload {
namespace {

// `s` cut to at most kMaxNameBytes, at a UTF-8 character boundary; null is empty.
std::string boundedName(const char* s) {
  if (!s) return std::string();
  size_t n = 0;
  while (n < kMaxNameBytes && s[n]) ++n;
  if (s[n]) {
    // Cut: never inside a multi-byte character (its continuation bytes are 10xxxxxx).
    while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  }
  return std::string(s, n);
}

// Where an entry lies and how its value reads. size 0: unknown (the entries
// after it cannot be placed by alignment).
struct Layout {
  uint64_t size = 0;
  uint64_t align = 0;
  uint32_t kind = 0;  // rs::PayloadValueKind; 0: not a value we decode (skipped, its bytes still counted)
  const Enum* enumeration = nullptr;
};

constexpr uint32_t kSigned = rs::kPayloadSigned;
constexpr uint32_t kUnsigned = rs::kPayloadUnsigned;
constexpr uint32_t kFloat = rs::kPayloadFloat;

// Sizes and alignment of the predefined types in this process: the
// collector runs inside the program that laid the payload out, so its own
// ABI (LP64 on Linux: long and size_t of 8 bytes) is the program's — what
// NVTX's nvtxExtPayloadTypeInfo table records from the same compiler.
Layout predefined(uint64_t type) {
  switch (type) {
    case NVTX_PAYLOAD_ENTRY_TYPE_CHAR: return {sizeof(char), alignof(char), kSigned};
    case NVTX_PAYLOAD_ENTRY_TYPE_UCHAR: return {1, 1, kUnsigned};
    case NVTX_PAYLOAD_ENTRY_TYPE_SHORT: return {sizeof(short), alignof(short), kSigned};
    case NVTX_PAYLOAD_ENTRY_TYPE_USHORT: return {sizeof(short), alignof(short), kUnsigned};
    case NVTX_PAYLOAD_ENTRY_TYPE_INT: return {sizeof(int), alignof(int), kSigned};
    case NVTX_PAYLOAD_ENTRY_TYPE_UINT: return {sizeof(int), alignof(int), kUnsigned};
    case NVTX_PAYLOAD_ENTRY_TYPE_LONG: return {sizeof(long), alignof(long), kSigned};
    case NVTX_PAYLOAD_ENTRY_TYPE_ULONG: return {sizeof(long), alignof(long), kUnsigned};
    case NVTX_PAYLOAD_ENTRY_TYPE_LONGLONG: return {sizeof(long long), alignof(long long), kSigned};
    case NVTX_PAYLOAD_ENTRY_TYPE_ULONGLONG: return {sizeof(long long), alignof(long long), kUnsigned};
    case NVTX_PAYLOAD_ENTRY_TYPE_INT8: return {1, 1, kSigned};
    case NVTX_PAYLOAD_ENTRY_TYPE_UINT8: return {1, 1, kUnsigned};
    case NVTX_PAYLOAD_ENTRY_TYPE_INT16: return {2, 2, kSigned};
    case NVTX_PAYLOAD_ENTRY_TYPE_UINT16: return {2, 2, kUnsigned};
    case NVTX_PAYLOAD_ENTRY_TYPE_INT32: return {4, 4, kSigned};
    case NVTX_PAYLOAD_ENTRY_TYPE_UINT32: return {4, 4, kUnsigned};
    case NVTX_PAYLOAD_ENTRY_TYPE_INT64: return {8, 8, kSigned};
    case NVTX_PAYLOAD_ENTRY_TYPE_UINT64: return {8, 8, kUnsigned};
    case NVTX_PAYLOAD_ENTRY_TYPE_FLOAT: return {sizeof(float), alignof(float), kFloat};
    case NVTX_PAYLOAD_ENTRY_TYPE_DOUBLE: return {sizeof(double), alignof(double), kFloat};
    case NVTX_PAYLOAD_ENTRY_TYPE_LONGDOUBLE: return {sizeof(long double), alignof(long double), 0};
    case NVTX_PAYLOAD_ENTRY_TYPE_SIZE: return {sizeof(size_t), alignof(size_t), kUnsigned};
    // An address means nothing outside the process: its bytes are skipped.
    case NVTX_PAYLOAD_ENTRY_TYPE_ADDRESS: return {sizeof(void*), alignof(void*), 0};
    case NVTX_PAYLOAD_ENTRY_TYPE_WCHAR: return {sizeof(wchar_t), alignof(wchar_t), 0};
    case NVTX_PAYLOAD_ENTRY_TYPE_CHAR8: return {1, 1, 0};
    case NVTX_PAYLOAD_ENTRY_TYPE_CHAR16: return {2, 2, 0};
    case NVTX_PAYLOAD_ENTRY_TYPE_CHAR32: return {4, 4, 0};
    case NVTX_PAYLOAD_ENTRY_TYPE_BYTE: return {1, 1, kUnsigned};
    case NVTX_PAYLOAD_ENTRY_TYPE_INT128:
    case NVTX_PAYLOAD_ENTRY_TYPE_UINT128:
    case NVTX_PAYLOAD_ENTRY_TYPE_FLOAT128: return {16, 16, 0};
    case NVTX_PAYLOAD_ENTRY_TYPE_FLOAT16:
    case NVTX_PAYLOAD_ENTRY_TYPE_BF16: return {2, 2, 0};
    case NVTX_PAYLOAD_ENTRY_TYPE_FLOAT32: return {4, 4, kFloat};
    case NVTX_PAYLOAD_ENTRY_TYPE_FLOAT64: return {8, 8, kFloat};
    case NVTX_PAYLOAD_ENTRY_TYPE_TF32: return {4, 4, 0};
    case NVTX_PAYLOAD_ENTRY_TYPE_CATEGORY:
    case NVTX_PAYLOAD_ENTRY_TYPE_COLOR_ARGB:
    case NVTX_PAYLOAD_ENTRY_TYPE_PID_UINT32:
    case NVTX_PAYLOAD_ENTRY_TYPE_TID_UINT32: return {4, 4, kUnsigned};
    case NVTX_PAYLOAD_ENTRY_TYPE_SCOPE_ID:
    case NVTX_PAYLOAD_ENTRY_TYPE_PID_UINT64:
    case NVTX_PAYLOAD_ENTRY_TYPE_TID_UINT64: return {8, 8, kUnsigned};
    case NVTX_PAYLOAD_ENTRY_TYPE_NVTX_REGISTERED_STRING_HANDLE: return {sizeof(void*), alignof(void*), 0};
    default: return {};
  }
}

// Bytes per character of the string types; 0 for other types.
uint64_t charBytes(uint64_t type) {
  switch (type) {
    case NVTX_PAYLOAD_ENTRY_TYPE_CSTRING:
    case NVTX_PAYLOAD_ENTRY_TYPE_CSTRING_UTF8: return 1;
    case NVTX_PAYLOAD_ENTRY_TYPE_CSTRING_UTF16: return 2;
    case NVTX_PAYLOAD_ENTRY_TYPE_CSTRING_UTF32: return 4;
    default: return 0;
  }
}

// Flags that change where an entry's bytes are or how many there are.
constexpr uint64_t kArrayFlags = 7u << 4;  // NVTX_PAYLOAD_ENTRY_FLAG_ARRAY_*
constexpr uint64_t kIndirectFlags =
    NVTX_PAYLOAD_ENTRY_FLAG_POINTER | NVTX_PAYLOAD_ENTRY_FLAG_OFFSET_FROM_BASE | NVTX_PAYLOAD_ENTRY_FLAG_OFFSET_FROM_HERE;

// Multiplies without wrapping: 0 (unknown) when the product does not fit.
uint64_t times(uint64_t a, uint64_t b) { return b != 0 && a > UINT64_MAX / b ? 0 : a * b; }

Layout layoutOf(Registry& registry, uint32_t domain, const Entry& e) {
  if (e.flags & NVTX_PAYLOAD_ENTRY_FLAG_POINTER) return {sizeof(void*), alignof(void*), 0};  // the pointee is elsewhere
  if (e.flags & kIndirectFlags) return {};
  const uint64_t array = e.flags & kArrayFlags;
  if (const uint64_t c = charBytes(e.type)) {
    // An embedded fixed-size string (no flags, or the redundant fixed-size
    // flag, and its length in array_or_union_detail): skipped, its bytes counted.
    if ((array == 0 || array == NVTX_PAYLOAD_ENTRY_FLAG_ARRAY_FIXED_SIZE) && e.array_or_union_detail > 0) {
      return {times(c, e.array_or_union_detail), c, 0};
    }
    return {};
  }
  Layout one;
  if (e.type < NVTX_PAYLOAD_SCHEMA_ID_STATIC_START) {
    one = predefined(e.type);
  } else {
    const Registration& r = registry.get(domain, e.type);
    const uint64_t n = r.enumeration.size;
    if (r.kind == Registration::kEnum && (n == 1 || n == 2 || n == 4 || n == 8)) one = {n, n, rs::kPayloadEnum, &r.enumeration};
    // A nested schema: its size and alignment are not known safely; skipped.
  }
  if (one.size == 0) return {};
  if (array == 0) return one;
  if (array == NVTX_PAYLOAD_ENTRY_FLAG_ARRAY_FIXED_SIZE && e.array_or_union_detail > 0) {
    return {times(one.size, e.array_or_union_detail), one.align, 0};  // an array: skipped, its bytes counted
  }
  return {};  // variable-length arrays: their size is in the data
}

// `n` bytes (1, 2, 4 or 8) at p, little-endian, zero-extended.
uint64_t readUnsigned(const uint8_t* p, uint64_t n) {
  uint64_t v = 0;
  std::memcpy(&v, p, n);  // x86-64 and aarch64 Linux are little-endian, as record_format.h asserts
  return v;
}

bool readValue(const Layout& l, const uint8_t* p, Field* f) {
  f->kind = l.kind;
  switch (l.kind) {
    case rs::kPayloadSigned: {
      if (l.size != 1 && l.size != 2 && l.size != 4 && l.size != 8) return false;
      const uint64_t v = readUnsigned(p, l.size);
      const unsigned shift = static_cast<unsigned>(64 - 8 * l.size);
      f->value = static_cast<uint64_t>(static_cast<int64_t>(v << shift) >> shift);  // sign-extended
      return true;
    }
    case rs::kPayloadUnsigned:
      if (l.size != 1 && l.size != 2 && l.size != 4 && l.size != 8) return false;
      f->value = readUnsigned(p, l.size);
      return true;
    case rs::kPayloadFloat: {
      double d;
      if (l.size == sizeof(float)) {
        float x;
        std::memcpy(&x, p, sizeof x);
        d = x;
      } else if (l.size == sizeof(double)) {
        std::memcpy(&d, p, sizeof d);
      } else {
        return false;
      }
      std::memcpy(&f->value, &d, sizeof d);
      return true;
    }
    case rs::kPayloadEnum: {
      f->value = readUnsigned(p, l.size);
      // Compared in the enum's own width: a registered -1 is 2^64 − 1, a 4-byte value 2^32 − 1.
      const uint64_t mask = l.size == 8 ? UINT64_MAX : (uint64_t{1} << (8 * l.size)) - 1;
      for (const auto& [value, name] : l.enumeration->values) {
        if ((value & mask) == f->value) {
          f->label = name;
          break;
        }
      }
      return true;
    }
    default: return false;
  }
}

}  // namespace

// The fields are read whatever fieldMask says: type, entries and their
// number are mandatory (nvtxPayloadSchemaAttr_t), the rest is zero when not
// set (NCCL and NVTX's helpers zero-initialise the struct), and CUPTI's
// copies are not documented to keep the mask. Zero means "not given".
Schema schemaOf(const nvtxPayloadSchemaAttr_t& attr) {
  Schema s;
  s.type = attr.type;
  s.static_size = attr.payloadStaticSize;
  if (!attr.entries) return s;
  const size_t n = attr.numEntries < kMaxEntries ? attr.numEntries : kMaxEntries;
  s.entries.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const nvtxPayloadSchemaEntry_t& e = attr.entries[i];
    s.entries.push_back(Entry{e.flags, e.type, boundedName(e.name), e.arrayOrUnionDetail, e.offset});
  }
  return s;
}

Enum enumOf(const nvtxPayloadEnumAttr_t& attr) {
  Enum e;
  e.size = attr.sizeOfEnum;
  if (!attr.entries) return e;
  const size_t n = attr.numEntries < kMaxEnumValues ? attr.numEntries : kMaxEnumValues;
  e.values.reserve(n);
  for (size_t i = 0; i < n; ++i) e.values.emplace_back(attr.entries[i].value, boundedName(attr.entries[i].name));
  return e;
}

const Registration& Registry::get(uint32_t domain, uint64_t id) {
  const auto key = std::make_pair(domain, id);
  auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  // Past the cap nothing more is fetched (a program registering thousands
  // of schemas loses the payloads of the later ones, not its memory), and
  // what is cached stays where it is: callers hold references into it.
  if (cache_.size() >= kMaxCached) return none_;
  return cache_.emplace(key, fetch_ ? fetch_(domain, id) : Registration{}).first->second;
}

bool decode(Registry& registry, uint32_t domain, uint64_t schema_id, const void* data, size_t size, std::vector<Field>* out) {
  out->clear();
  // SIZE_MAX: the program left the size to the tool; not guessed here.
  if (!data || size == 0 || size == SIZE_MAX) return false;
  const auto* bytes = static_cast<const uint8_t*>(data);
  if (schema_id < NVTX_PAYLOAD_SCHEMA_ID_STATIC_START) {
    // A single value of a predefined type.
    const Layout l = predefined(schema_id);
    Field f;
    if (l.kind == 0 || l.size > size || !readValue(l, bytes, &f)) return false;
    out->push_back(std::move(f));
    return true;
  }
  const Registration& r = registry.get(domain, schema_id);
  if (r.kind != Registration::kSchema) return false;
  const Schema& s = r.schema;
  // Unions (external or internal selector) pick their member from the data: not decoded.
  if (s.type != NVTX_PAYLOAD_SCHEMA_TYPE_STATIC && s.type != NVTX_PAYLOAD_SCHEMA_TYPE_DYNAMIC) return false;
  uint64_t cursor = 0;  // the end of the previous entry, while known
  bool cursor_known = true;
  for (size_t i = 0; i < s.entries.size(); ++i) {
    const Entry& e = s.entries[i];
    const Layout l = layoutOf(registry, domain, e);
    // An offset of 0 after the first entry means "where natural alignment
    // puts it after the previous one" (nvtxPayloadSchemaEntry_t::offset).
    uint64_t at;
    if (i == 0 || e.offset != 0) {
      at = e.offset;
    } else if (cursor_known && l.align > 0) {
      at = (cursor + l.align - 1) / l.align * l.align;
    } else {
      cursor_known = false;
      continue;
    }
    if (l.size == 0 || at > size || l.size > size - at) {
      // Of unknown size, or past the end of the block: nothing after it can be placed by alignment.
      cursor_known = false;
      continue;
    }
    cursor = at + l.size;
    cursor_known = true;
    if (l.kind == 0 || (e.flags & NVTX_PAYLOAD_ENTRY_FLAG_HIDE)) continue;
    if (out->size() >= rs::kMarkerPayloadMaxFields) break;
    Field f;
    f.name = e.name;
    f.entry_index = static_cast<uint32_t>(i);
    if (readValue(l, bytes + at, &f)) out->push_back(std::move(f));
  }
  return !out->empty();
}

}  // namespace streamscope::nvtx_payload
