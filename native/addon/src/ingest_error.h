// The one error type of the native ingest (ingest.cc and the units it is
// built from: ingest_statements, record_decoding). The message names the file.
#pragma once

#include <stdexcept>
#include <string>

namespace streamscope::addon {

// A problem with a file or the database.
// `database` separates a failed write (disk full, lock: the call's records
// are rolled back) from malformed input (the records before it are kept).
class IngestError : public std::runtime_error {
 public:
  explicit IngestError(const std::string& what, bool database = false) : std::runtime_error(what), database(database) {}
  const bool database;
};

}  // namespace streamscope::addon
