// A SQLite extension that stops a query after a time limit: what the SQL
// console (profiler/query/sql-console.ts: `streamscope sql`, the app's
// Query tab) needs to run the SQL a user types.
//
// Why native: better-sqlite3 runs a statement synchronously and has no way
// to stop it; its SQLite is built with SQLITE_OMIT_PROGRESS_CALLBACK, so no
// progress handler can either; and a Node worker thread cannot be
// terminated while it is inside native code (worker.terminate() waits for
// the statement, and the process then never exits). A runaway recursive CTE
// would hold its thread for ever. sqlite3_interrupt(), which SQLite lets any
// thread call, makes the running statement fail with SQLITE_INTERRUPT at its
// next jump: a watchdog thread per armed query calls it at the deadline.
//
// Loaded with sqlite3_load_extension (better-sqlite3's loadExtension) from
// this same .node file, entry point sqlite3_streamscope_time_limit_init.
// Every SQLite call here goes through the sqlite3_api table that loading
// hands in, i.e. to better-sqlite3's SQLite: never to the copy compiled into
// this addon for the ingest (two copies must not share a connection).
//
// SQL functions on the connection (DIRECTONLY: not from views or triggers):
//   streamscope_time_limit(ms)           arms the limit and returns a token; an error
//                                        when one is armed already, so the query it
//                                        guards cannot arm another to lift it
//   streamscope_time_limit_clear(token)  disarms it (an error for any other token);
//                                        1 when the limit had fired, else 0
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <random>
#include <system_error>
#include <thread>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT1

namespace {

// Tokens stay exact as JS numbers (better-sqlite3 returns integers as doubles).
constexpr std::uint64_t kTokenMask = (std::uint64_t{1} << 52) - 1;

class TimeLimit {
 public:
  explicit TimeLimit(sqlite3* db) : db_(db), random_(std::random_device{}()) {}
  // Runs when the connection closes (the functions' destructor): the
  // watchdog must be gone before the connection is.
  // (Armed exactly while the watchdog thread is joinable: Arm and Clear
  // run on the connection's thread, one at a time.)
  ~TimeLimit() {
    if (watchdog_.joinable()) Clear(token_);
  }

  // The token, 0 when a limit is armed already, -1 when no thread could be started.
  std::int64_t Arm(std::int64_t ms) {
    if (watchdog_.joinable()) return 0;
    std::int64_t token;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      do token = static_cast<std::int64_t>(random_() & kTokenMask);
      while (token == 0);
      token_ = token;
      armed_ = true;
      fired_ = false;
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    try {
      watchdog_ = std::thread([this, deadline] { Watch(deadline); });
    } catch (const std::system_error&) {
      std::lock_guard<std::mutex> lock(mutex_);
      armed_ = false;
      return -1;
    }
    return token;
  }

  // 1 when the limit had fired, 0 when it had not, -1 for a wrong token.
  int Clear(std::int64_t token) {
    bool fired;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!armed_ || token != token_) return -1;
      armed_ = false;
      fired = fired_;
    }
    wake_.notify_all();
    watchdog_.join();
    return fired ? 1 : 0;
  }

 private:
  void Watch(std::chrono::steady_clock::time_point deadline) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (wake_.wait_until(lock, deadline, [this] { return !armed_; })) return;
    fired_ = true;
    // Safe from another thread, by SQLite's contract; a no-op when no
    // statement runs (the flag is cleared when the next one starts).
    sqlite3_interrupt(db_);
  }

  sqlite3* const db_;
  std::mt19937_64 random_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::thread watchdog_;
  bool armed_ = false;
  bool fired_ = false;
  std::int64_t token_ = 0;
};

TimeLimit* LimitOf(sqlite3_context* ctx) { return static_cast<TimeLimit*>(sqlite3_user_data(ctx)); }

void ArmFunction(sqlite3_context* ctx, int, sqlite3_value** argv) {
  // A whole number of milliseconds, bound as an integer or (JS numbers) a double.
  const double ms = sqlite3_value_double(argv[0]);
  const int type = sqlite3_value_numeric_type(argv[0]);
  if ((type != SQLITE_INTEGER && type != SQLITE_FLOAT) || !(ms >= 1 && ms <= 24 * 3600 * 1000) ||
      ms != static_cast<double>(static_cast<std::int64_t>(ms))) {
    sqlite3_result_error(ctx, "streamscope_time_limit: a whole number of milliseconds in [1, 86400000]", -1);
    return;
  }
  const std::int64_t token = LimitOf(ctx)->Arm(static_cast<std::int64_t>(ms));
  if (token <= 0) {
    sqlite3_result_error(ctx,
                         token == 0 ? "streamscope_time_limit: a time limit is already set on this connection"
                                    : "streamscope_time_limit: cannot start the watchdog thread",
                         -1);
    return;
  }
  sqlite3_result_int64(ctx, token);
}

void ClearFunction(sqlite3_context* ctx, int, sqlite3_value** argv) {
  const int fired = LimitOf(ctx)->Clear(static_cast<std::int64_t>(sqlite3_value_double(argv[0])));
  if (fired < 0) {
    sqlite3_result_error(ctx, "streamscope_time_limit_clear: not the token of the armed time limit", -1);
    return;
  }
  sqlite3_result_int(ctx, fired);
}

void DestroyLimit(void* p) { delete static_cast<TimeLimit*>(p); }

}  // namespace

extern "C" __attribute__((visibility("default"))) int sqlite3_streamscope_time_limit_init(sqlite3* db, char** error,
                                                                                          const sqlite3_api_routines* api) {
  SQLITE_EXTENSION_INIT2(api);
  (void)error;
  auto* limit = new TimeLimit(db);
  const int flags = SQLITE_UTF8 | SQLITE_DIRECTONLY;
  // The first function owns the state: SQLite calls DestroyLimit when the
  // connection closes (or the function is replaced), after which neither
  // function can run.
  int rc = sqlite3_create_function_v2(db, "streamscope_time_limit", 1, flags, limit, ArmFunction, nullptr, nullptr, DestroyLimit);
  if (rc != SQLITE_OK) return rc;  // DestroyLimit has run
  return sqlite3_create_function_v2(db, "streamscope_time_limit_clear", 1, flags, limit, ClearFunction, nullptr, nullptr, nullptr);
}
