// NVTX extended payloads (nvtx3/nvToolsExtPayload.h) decoded into scalar
// fields. A program registers a schema — entries with a name, a type and an
// offset, like a C struct's members — and enums under ids of its domain,
// then attaches a block of bytes laid out by a schema to a range or mark.
// NCCL does so for every collective (src/include/nvtx_payload_schemas.h:
// communicator id, message size in bytes, reduction, root or peer, under
// static schema ids from 1 << 24 up, the reduction an enum registered with
// nvtxPayloadEnumRegister).
//
// Who sees the registrations: NVTX hands its payload extension to the
// library in NVTX_INJECTION64_PATH through InitializeInjectionNvtxExtension
// (nvtxExtInit.h); without that entry point the extension is disabled and
// every registration is a no-op. The collector forwards the entry point to
// CUPTI (nvtx_forward.cc), which keeps the schemas (cuptiActivity-
// GetNvtxExtPayloadAttr) and delivers each payload, copied, in a
// MARKER_DATA activity record (activity_translator.cc). This file is the
// decoding only: no CUPTI call, so the selftest drives it with the schemas
// NCCL registers, built by hand.
//
// Decoding runs on bytes a program produced, inside that program: every
// offset and size is checked against the block before it is read, reads are
// memcpy (no alignment assumed), and what cannot be decoded safely is left
// out rather than guessed. Bounded: at most kMarkerPayloadMaxFields fields,
// kMaxEntries schema entries looked at, names cut at kMaxNameBytes, a
// capped number of registrations cached.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "record_format.h"

// NVTX's registration structs (nvToolsExtPayload.h), included by
// nvtx_payload.cc only: its users need not compile NVTX's headers.
struct nvtxPayloadSchemaAttr_v1;
struct nvtxPayloadEnumAttr_v1;

namespace streamscope::nvtx_payload {

inline constexpr size_t kMaxEntries = 256;
inline constexpr size_t kMaxNameBytes = 128;
inline constexpr size_t kMaxEnumValues = 1024;
inline constexpr size_t kMaxCached = 4096;

// One entry of a schema, as registered (nvtxPayloadSchemaEntry_t).
struct Entry {
  uint64_t flags = 0;
  uint64_t type = 0;  // NVTX_PAYLOAD_ENTRY_TYPE_* or a registered id (an enum, a nested schema)
  std::string name;
  uint64_t array_or_union_detail = 0;
  uint64_t offset = 0;  // 0 after the first entry: natural alignment after the previous one
};

struct Schema {
  uint64_t type = 0;         // NVTX_PAYLOAD_SCHEMA_TYPE_*
  uint64_t static_size = 0;  // 0: not given
  std::vector<Entry> entries;
};

struct Enum {
  uint64_t size = 0;  // bytes of a value
  std::vector<std::pair<uint64_t, std::string>> values;
};

// What a domain has under one id.
struct Registration {
  enum Kind { kNone, kSchema, kEnum } kind = kNone;
  Schema schema;
  Enum enumeration;
};

// Copies of NVTX's registration structs, bounded, null pointers read as empty.
Schema schemaOf(const nvtxPayloadSchemaAttr_v1& attr);
Enum enumOf(const nvtxPayloadEnumAttr_v1& attr);

// The registrations of every domain, fetched once per (domain, id) from
// whoever keeps them (CUPTI in the collector, a table in the selftest).
// Not thread-safe: the translator's, on the writer thread.
class Registry {
 public:
  using Fetch = std::function<Registration(uint32_t domain, uint64_t id)>;
  explicit Registry(Fetch fetch) : fetch_(std::move(fetch)) {}
  // A kNone registration when nothing is registered under the id.
  const Registration& get(uint32_t domain, uint64_t id);

 private:
  Fetch fetch_;
  std::map<std::pair<uint32_t, uint64_t>, Registration> cache_;
  Registration none_;
};

// A decoded field, as MarkerPayloadField carries it with text in place of string ids.
struct Field {
  std::string name;
  uint32_t entry_index = 0;
  uint32_t kind = 0;  // rs::PayloadValueKind
  uint64_t value = 0;
  std::string label;  // kPayloadEnum: the value's registered name, or empty
};

// The scalar fields of `size` bytes at `data` laid out by schema `schema_id`
// of `domain` (or, for an id below NVTX_PAYLOAD_SCHEMA_ID_STATIC_START, one
// value of that predefined type). False, with *out empty, when the schema is
// unknown or nothing could be decoded; entries that cannot be read safely
// (arrays, pointers, strings, nested schemas, past the end of the block)
// are skipped, and so is every entry after one of unknown size unless it
// gives its own offset.
bool decode(Registry& registry, uint32_t domain, uint64_t schema_id, const void* data, size_t size, std::vector<Field>* out);

}  // namespace streamscope::nvtx_payload
