// libFuzzer target "ingest": arbitrary bytes as a collector's stream file,
// ingested into a recording by the native ingest (native/addon/src/
// ingest.h) as the recorder drives it: a first call while the "target" is
// still writing (the file cut at a point the bytes choose), a final call on
// the whole file, then finish() building the indexes the bulk load left
// out; for one input in four, the same bytes once more as a second file in
// a second session on the finished recording. Malformed input must end in
// an IngestError that names it; any other exception, an error of the
// database (a SqliteError: a write the schema refused, the whole call
// rolled back), or rows whose references lead nowhere (PRAGMA
// foreign_key_check) is a defect and aborts.
//
// The recording is an empty one made by the TypeScript store
// (createRecording: every migration; build.sh writes it as
// recording-template.sqlite beside this binary, STREAMSCOPE_FUZZ_TEMPLATE
// overrides), copied for each input into a database in memory (SQLite's
// memdb VFS, shared by name between the ingest's connection and this
// file's), so an input costs no disk I/O and leaves nothing behind. The
// stream is a memfd, named to the ingest as /proc/self/fd/N.
//
// SQLite allocates from a heap of its own (memsys5), not through ASan's
// malloc: opening a connection and preparing the ingest's statements is
// thousands of small allocations, and through ASan an input cost 7 ms
// instead of 0.6. What SQLite hands our code (column text, error messages)
// is then not bounds-checked by ASan; everything our code allocates is.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "ingest.h"
#include "sqlite3.h"

using namespace streamscope;
using addon::IngestError;

namespace {

// The recording origin the ingest rebases every stream onto: a CUPTI
// timestamp like the synthetic streams' default, so a stream's shift is
// whatever its header's origin makes it.
constexpr uint64_t kRecordingOrigin = 1763800000000000000ull;
const char* const kRecording = "file:/streamscope-ingest-fuzz?vfs=memdb";

sqlite3* g_template = nullptr;   // the empty recording, without its secondary indexes
std::vector<std::string> g_ddl;  // those indexes, built by finish() as the recorder has it do
int g_stream = -1;               // memfd of the stream
std::string g_stream_path;
int g_again = -1;  // memfd of the same bytes, ingested again in a second session
std::string g_again_path;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "ingest: %s\n", what.c_str());
  std::abort();
}

void execOrFail(sqlite3* db, const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    const std::string why = err ? err : "?";
    sqlite3_free(err);
    fail(sql + ": " + why);
  }
}

std::string templatePath(const char* argv0) {
  if (const char* env = std::getenv("STREAMSCOPE_FUZZ_TEMPLATE")) return env;
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  std::string self = n > 0 ? std::string(exe, static_cast<size_t>(n)) : std::string(argv0);
  return self.substr(0, self.rfind('/') + 1) + "recording-template.sqlite";
}

// Copies every page of `from` into `to` (SQLite's online backup).
void copyDatabase(sqlite3* from, sqlite3* to) {
  sqlite3_backup* b = sqlite3_backup_init(to, "main", from, "main");
  if (!b) fail(std::string("backup: ") + sqlite3_errmsg(to));
  const int rc = sqlite3_backup_step(b, -1);
  sqlite3_backup_finish(b);
  if (rc != SQLITE_DONE) fail("backup step: " + std::to_string(rc));
}

// FNV-1a: where the first call cuts the stream, a function of the input alone, so a crash reproduces.
uint64_t hashOf(const uint8_t* data, size_t size) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < size; i++) h = (h ^ data[i]) * 1099511628211ull;
  return h;
}

void writeStream(int fd, const uint8_t* data, size_t from, size_t to) {
  if (to > from && pwrite(fd, data + from, to - from, static_cast<off_t>(from)) != static_cast<ssize_t>(to - from)) {
    fail("cannot write the stream's memfd");
  }
}

// One call of the ingest: malformed input is an IngestError naming the file; any other outcome but success is a defect.
template <class F>
bool call(const char* what, F&& f) {
  try {
    f();
    return true;
  } catch (const addon::SqliteError& e) {
    fail(std::string(what) + ": a database error on well-formed storage: " + e.what());
  } catch (const IngestError& e) {
    if (std::string(e.what()).find("/proc/self/fd/") == std::string::npos)
      fail(std::string(what) + ": error not naming the file: " + e.what());
    return false;
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  // The ingest opens its recording by name; the name is a URI (memdb).
  sqlite3_config(SQLITE_CONFIG_URI, 1);
  // Room for the ingest's 64 MiB page cache and more: running out is a database error, which fails the input.
  static constexpr int kHeapBytes = 256 << 20;
  static char* heap = static_cast<char*>(std::malloc(kHeapBytes));
  if (sqlite3_config(SQLITE_CONFIG_HEAP, heap, kHeapBytes, 64) != SQLITE_OK) fail("cannot give SQLite its heap");
  const std::string path = templatePath((*argv)[0]);
  sqlite3* file = nullptr;
  if (sqlite3_open_v2(path.c_str(), &file, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    fail(path + ": cannot open the recording template (native/fuzz/build.sh writes it): " + sqlite3_errmsg(file));
  }
  sqlite3_open(":memory:", &g_template);
  copyDatabase(file, g_template);
  sqlite3_close(file);
  // As the recorder's beginBulkLoad (profiler/store/database.ts): the secondary indexes go, finish() builds them.
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(g_template, "SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL", -1, &s, nullptr);
  std::vector<std::string> names;
  while (sqlite3_step(s) == SQLITE_ROW) {
    names.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(s, 0)));
    g_ddl.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(s, 1)));
  }
  sqlite3_finalize(s);
  if (g_ddl.empty()) fail(path + ": the template has no indexes: not a recording made by createRecording");
  for (const std::string& name : names) execOrFail(g_template, "DROP INDEX \"" + name + "\"");

  g_stream = memfd_create("ingest-fuzz-stream", MFD_CLOEXEC);
  if (g_stream < 0) fail("memfd_create failed");
  g_stream_path = "/proc/self/fd/" + std::to_string(g_stream);
  g_again = memfd_create("ingest-fuzz-again", MFD_CLOEXEC);
  if (g_again < 0) fail("memfd_create failed");
  g_again_path = "/proc/self/fd/" + std::to_string(g_again);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The recording, fresh: held open here so that it outlives the ingest's connection (memdb frees a database with its last one).
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(kRecording, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI, nullptr) != SQLITE_OK) {
    fail(std::string("cannot open the recording in memory: ") + sqlite3_errmsg(db));
  }
  copyDatabase(g_template, db);

  if (ftruncate(g_stream, 0) != 0) fail("cannot truncate the stream's memfd");
  const uint64_t hash = hashOf(data, size);
  const size_t cut = size ? static_cast<size_t>(hash % (size + 1)) : 0;
  {
    addon::Ingest ingest(kRecording, kRecordingOrigin);
    writeStream(g_stream, data, 0, cut);
    // While the target writes: a partial record waits for the next call.
    bool ok = call("ingestFile", [&] { ingest.ingestFile(g_stream_path, false); });
    writeStream(g_stream, data, cut, size);
    // A file that was refused stays refused; one that was not is read on to its end.
    if (ok) call("final ingestFile", [&] { ingest.ingestFile(g_stream_path, true); });
    call("finish", [&] { ingest.finish(g_ddl); });
  }
  if ((hash >> 32) % 4 == 0) {
    // One input in four: the same bytes again as another file, in a second session on the now full recording (its
    // indexes built): the ids of strings, devices, contexts and streams read back from the rows (a resumed recording,
    // or a second stream of the same pid).
    if (ftruncate(g_again, 0) != 0) fail("cannot truncate the stream's memfd");
    writeStream(g_again, data, 0, size);
    addon::Ingest ingest(kRecording, kRecordingOrigin);
    call("ingestFile, second session", [&] { ingest.ingestFile(g_again_path, true); });
    call("finish, second session", [&] { ingest.finish(); });
  }

  // Every reference the rows make leads to a row.
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db, "PRAGMA foreign_key_check", -1, &s, nullptr) != SQLITE_OK) fail(sqlite3_errmsg(db));
  if (sqlite3_step(s) == SQLITE_ROW) {
    fail(std::string("a row of ") + reinterpret_cast<const char*>(sqlite3_column_text(s, 0)) + " (rowid " +
         std::to_string(sqlite3_column_int64(s, 1)) + ") refers to a missing row of " +
         reinterpret_cast<const char*>(sqlite3_column_text(s, 2)));
  }
  sqlite3_finalize(s);
  sqlite3_close(db);
  return 0;
}
