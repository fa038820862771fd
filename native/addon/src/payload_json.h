// A MarkerPayload record (record_format.h) as the JSON object stored in
// nvtx_ranges.payload (schema 10, SCHEMA.md "NVTX payloads"): one member
// per field, keyed by the schema entry's own name, in the record's order.
//
//   {"NCCL communicator ID": "18364758544493064720", "Message size [bytes]": 16777216,
//    "Reduction operation": "Sum"}
//
// Integers are JSON numbers while exact in a double (|v| < 2^53), decimal
// strings beyond (a communicator hash); floats are numbers, or null when not
// finite; an enum value is the name the program registered for it, or its
// number where none matched. An unnamed entry is keyed "#<its index in the
// schema>"; a name given twice keeps its first field and suffixes the
// others " #<index>". No SQLite, no file: ingest.cc hands in the fields and
// a lookup of its strings.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "record_decoding.h"
#include "record_format.h"

namespace streamscope::addon {

// The fields of a MarkerPayload record, copied out of the stream; throws
// IngestError when the record is smaller than its field count says.
std::vector<rs::MarkerPayloadField> payloadFields(const Record& r, const std::string& path);

// `text(sid)` gives the text of a string id of the stream.
std::string payloadJson(const std::vector<rs::MarkerPayloadField>& fields, const std::function<std::string(uint32_t)>& text);

}  // namespace streamscope::addon
