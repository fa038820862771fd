#include "payload_json.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>

#include "ingest_error.h"

namespace streamscope::addon {
namespace {

using namespace rs;

// The largest integer a double (a JS number) holds exactly.
constexpr uint64_t kExact = (uint64_t{1} << 53) - 1;

void appendQuoted(std::string& out, const std::string& s) {
  out += '"';
  for (const unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char b[8];
          std::snprintf(b, sizeof b, "\\u%04x", c);
          out += b;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

void appendUnsigned(std::string& out, uint64_t v) {
  const std::string digits = std::to_string(v);
  if (v <= kExact) out += digits;
  else appendQuoted(out, digits);
}

void appendSigned(std::string& out, int64_t v) {
  const std::string digits = std::to_string(v);
  if (v <= static_cast<int64_t>(kExact) && v >= -static_cast<int64_t>(kExact)) out += digits;
  else appendQuoted(out, digits);
}

void appendFloat(std::string& out, uint64_t bits) {
  double d;
  std::memcpy(&d, &bits, sizeof d);
  if (!std::isfinite(d)) {
    out += "null";
    return;
  }
  char b[32];
  // The shortest text that reads back as the same double.
  const auto r = std::to_chars(b, b + sizeof b, d);
  out.append(b, r.ptr);
}

}  // namespace

std::vector<MarkerPayloadField> payloadFields(const Record& r, const std::string& path) {
  const auto head = load<MarkerPayloadRecord>(r.bytes);
  if (sizeof(MarkerPayloadRecord) + uint64_t{head.field_count} * sizeof(MarkerPayloadField) > r.size) {
    throw IngestError(path + ": corrupt record at byte " + std::to_string(r.offset) + ": MarkerPayload record of " +
                      std::to_string(r.size) + " bytes for " + std::to_string(head.field_count) + " fields");
  }
  std::vector<MarkerPayloadField> fields(head.field_count);
  if (head.field_count > 0) std::memcpy(fields.data(), r.bytes + sizeof(MarkerPayloadRecord), fields.size() * sizeof(MarkerPayloadField));
  return fields;
}

std::string payloadJson(const std::vector<MarkerPayloadField>& fields, const std::function<std::string(uint32_t)>& text) {
  std::string out = "{";
  std::set<std::string> keys;
  for (const MarkerPayloadField& f : fields) {
    if (f.kind < kPayloadSigned || f.kind > kPayloadEnum) continue;  // a kind newer than this reader
    const std::string index = "#" + std::to_string(f.entry_index);
    std::string key = f.name_sid ? text(f.name_sid) : index;
    if (!keys.insert(key).second) {
      key += " " + index;
      if (!keys.insert(key).second) continue;
    }
    if (out.size() > 1) out += ',';
    appendQuoted(out, key);
    out += ':';
    switch (f.kind) {
      case kPayloadSigned: appendSigned(out, static_cast<int64_t>(f.value)); break;
      case kPayloadUnsigned: appendUnsigned(out, f.value); break;
      case kPayloadFloat: appendFloat(out, f.value); break;
      case kPayloadEnum:
        if (f.label_sid) appendQuoted(out, text(f.label_sid));
        else appendUnsigned(out, f.value);
        break;
    }
  }
  return out + "}";
}

}  // namespace streamscope::addon
