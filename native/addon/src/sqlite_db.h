// A connection to a SQLite file, its statements, and the one error type of
// a SQLite call that failed. Every database the addon opens goes through
// it: the ingest's recording (ingest.cc, ingest_statements.cc), the column
// loader's (table_loader.cc), the Kineto importer's output
// (trace_import.cc) and the ingest benchmark's (insert_ceiling.cc). The
// hot loops bind and step through SQLite's C API on `handle()`; what this
// adds is the opening and closing, the preparing, and how a failure is
// said. addon.cc turns a SqliteError into the JS Error (js_error.h), in one
// place.
//
// Not here: sql_time_limit.cc, a SQLite extension that calls
// better-sqlite3's SQLite through the sqlite3_api table it is loaded with,
// never the copy compiled into the addon.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "sqlite3.h"

namespace streamscope::addon {

// A SQLite call that failed. The message names the file first, as every
// native error does (the TypeScript side says it about the file the user
// named); `code()` is SQLite's extended result code. The JS Error carries
// that code only where the caller reads it (`jsCode`): the importer's
// output, whose full disk profiler/import says as a failed write; the
// ingest and the loader are read by their messages, as they always were.
class SqliteError : public std::runtime_error {
 public:
  SqliteError(const std::string& message, int code, bool code_in_js) : std::runtime_error(message), code_(code), code_in_js_(code_in_js) {}
  int code() const noexcept { return code_; }
  // The JS Error's `code`: "SQLITE_FULL", "SQLITE_IOERR" or "SQLITE_ERROR"
  // (any other); nullptr where the JS Error has none.
  const char* jsCode() const noexcept {
    if (!code_in_js_) return nullptr;
    const int primary = code_ & 0xff;
    return primary == SQLITE_FULL ? "SQLITE_FULL" : primary == SQLITE_IOERR ? "SQLITE_IOERR" : "SQLITE_ERROR";
  }

 private:
  int code_;
  bool code_in_js_;
};

struct FinalizeStatement {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
// A prepared statement, finalized however its scope ends.
using Statement = std::unique_ptr<sqlite3_stmt, FinalizeStatement>;

class Db {
 public:
  // Whether the JS Error of this connection's failures carries SQLite's code (SqliteError::jsCode).
  enum class Codes { Hidden, InJsErrors };

  // Opens `path` with sqlite3_open_v2's `flags`. Failure: "<path>: cannot
  // open the recording: <why>".
  Db(std::string path, int flags, Codes codes = Codes::Hidden) : path_(std::move(path)), code_in_js_(codes == Codes::InJsErrors) {
    if (sqlite3_open_v2(path_.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
      const std::string why = db_ ? sqlite3_errmsg(db_) : "out of memory";
      const int code = db_ ? sqlite3_extended_errcode(db_) : SQLITE_NOMEM;
      close();
      throw SqliteError(path_ + ": cannot open the recording: " + why, code, code_in_js_);
    }
  }
  ~Db() { close(); }
  Db(Db&& o) noexcept : db_(std::exchange(o.db_, nullptr)), path_(std::move(o.path_)), code_in_js_(o.code_in_js_) {}
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;
  Db& operator=(Db&&) = delete;

  sqlite3* handle() const { return db_; }
  const std::string& path() const { return path_; }
  bool isOpen() const { return db_ != nullptr; }
  // Closes the connection; its statements must have been finalized.
  void close() {
    if (db_) sqlite3_close(db_);
    db_ = nullptr;
  }

  // SQLite's message for the last failure on this connection.
  std::string errmsg() const { return db_ ? sqlite3_errmsg(db_) : "the database is closed"; }
  // Throws the failure SQLite reported last on this connection, said as `message`.
  [[noreturn]] void fail(const std::string& message) const {
    throw SqliteError(message, db_ ? sqlite3_extended_errcode(db_) : SQLITE_MISUSE, code_in_js_);
  }

  // Runs SQL text (transactions, pragmas, DDL). Failure: "<path>: <why> (<sql>)".
  void exec(const std::string& sql) const {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      const std::string why = err ? err : "unknown error";
      sqlite3_free(err);
      fail(path_ + ": " + why + " (" + sql + ")");
    }
  }
  // Prepares one statement (`flags`: sqlite3_prepare_v3's). Failure: "<path>: <why>".
  Statement prepare(const std::string& sql, unsigned flags = 0) const {
    Statement s = tryPrepare(sql, flags);
    if (!s) fail(path_ + ": " + errmsg());
    return s;
  }
  // The same, null where SQLite refuses the SQL (the caller says what that means).
  Statement tryPrepare(const std::string& sql, unsigned flags = 0) const {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v3(db_, sql.c_str(), -1, flags, &s, nullptr) != SQLITE_OK) {
      sqlite3_finalize(s);
      return nullptr;
    }
    return Statement(s);
  }
  // Runs `sql`, calling row(stmt) for each result row; `lo` and `hi`, where
  // the statement has two parameters, are bound to them (a rowid range).
  // Failure: "<path>: <why>".
  template <class F>
  void each(const std::string& sql, F&& row, int64_t lo = 0, int64_t hi = -1) const {
    Statement s = prepare(sql);
    if (sqlite3_bind_parameter_count(s.get()) == 2) {
      sqlite3_bind_int64(s.get(), 1, lo);
      sqlite3_bind_int64(s.get(), 2, hi);
    }
    int rc;
    while ((rc = sqlite3_step(s.get())) == SQLITE_ROW) row(s.get());
    if (rc != SQLITE_DONE) fail(path_ + ": " + errmsg());
  }

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
  bool code_in_js_;
};

}  // namespace streamscope::addon
