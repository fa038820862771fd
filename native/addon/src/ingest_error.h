// The native ingest's error for malformed input (ingest.cc and the units it
// is built from: record_decoding, payload_json): the message names the file
// and, within a stream, the byte offset. A failed write of the recording
// (disk full, lock) is a SqliteError instead (sqlite_db.h): the call's
// records are then rolled back, where those before malformed input are
// kept.
#pragma once

#include <stdexcept>
#include <string>

namespace streamscope::addon {

class IngestError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace streamscope::addon
