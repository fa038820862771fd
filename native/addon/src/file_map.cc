// mapFile(path, views): ArrayBuffers over a file's pages, without a copy:
// the column cache's (profiler/analysis/load/column-cache.ts). A warm
// analysis of 10 M operations read its 1.1 GB of columns into fresh
// memory, and on a virtual machine each fresh page costs its mapping by
// the host (~1.1 – 1.9 µs a 4 KiB page on the development VM: ~0.3 s of
// faults and clearing on each of two cores before the analysis began).
// Pages of a file already in the page cache are the host's already: mapped
// here, a view costs a page-table entry per 4 KiB (16 at a time, the
// kernel's fault-around), and every thread that maps the file reads the
// same pages. The map is private and writable: a write to a view (none is
// expected: the columns are read) copies its page, and never reaches the
// file.
//
// writeFileDirect(path, pieces, length): the entry written, on a thread of
// the pool, around the page cache (O_DIRECT, through an aligned buffer of
// 8 MiB): written through it, 1.1 GB took 2.7 s of the writing thread on
// the development VM, each page of the page cache a fresh page of the
// host's, and the command waited for it before it exited; around it, the
// disk's time (~1 s), while the analysis runs. Where the file system
// cannot (tmpfs), through the page cache.
#include "file_map.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace streamscope::addon {

namespace {

// One map of a file, unmapped when the last view over it is collected.
struct Mapping {
  void* base = nullptr;
  size_t bytes = 0;
  std::atomic<size_t> views{0};
};

void releaseView(napi_env /*env*/, void* /*data*/, void* hint) {
  auto* m = static_cast<Mapping*>(hint);
  if (m->views.fetch_sub(1) == 1) {
    munmap(m->base, m->bytes);
    delete m;
  }
}

std::string errnoText(int e) { return std::strerror(e); }

// What writeFileDirect writes: each piece's bytes at its offset, zeros after them to the next 4 KiB.
struct Piece {
  const uint8_t* data;
  size_t bytes;
  size_t offset;
};

constexpr size_t kBlock = 4096;
constexpr size_t kBounce = 8u << 20;

class DirectWriter : public Napi::AsyncWorker {
 public:
  DirectWriter(Napi::Env env, std::string path, std::vector<Piece> pieces, std::vector<Napi::ObjectReference> holds, size_t length)
      : Napi::AsyncWorker(env),
        deferred_(Napi::Promise::Deferred::New(env)),
        path_(std::move(path)),
        pieces_(std::move(pieces)),
        holds_(std::move(holds)),
        length_(length) {}
  Napi::Promise promise() { return deferred_.Promise(); }

  void Execute() override {
    void* bounce = nullptr;
    if (posix_memalign(&bounce, kBlock, kBounce) != 0) return SetError(path_ + ": no memory for the write's buffer");
    // Around the page cache; where the file system refuses that, at the open or at the first write (EINVAL), through it.
    int err = writeWith(O_DIRECT, bounce);
    if (err == EINVAL) err = writeWith(0, bounce);
    free(bounce);
    if (err != 0) SetError(failed_);
  }
  void OnOK() override { deferred_.Resolve(Env().Undefined()); }
  void OnError(const Napi::Error& e) override { deferred_.Reject(e.Value()); }

 private:
  // The whole file written, sized and synced through `fd` opened with `flags`: 0, or the errno of what failed (the
  // message in failed_).
  int writeWith(int flags, void* bounce) {
    const int fd = open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | flags, 0644);
    if (fd < 0) return fail(errno, "cannot create");
    int err = 0;
    for (size_t i = 0; i < pieces_.size() && err == 0; i++) {
      const Piece& p = pieces_[i];
      for (size_t done = 0; done < p.bytes && err == 0;) {
        const size_t n = std::min(kBounce, p.bytes - done);
        std::memcpy(bounce, p.data + done, n);
        // The last block of a piece filled out with zeros (the gap to the next piece's offset holds them).
        const size_t padded = (n + kBlock - 1) / kBlock * kBlock;
        std::memset(static_cast<uint8_t*>(bounce) + n, 0, padded - n);
        for (size_t w = 0; w < padded && err == 0;) {
          const ssize_t got = pwrite(fd, static_cast<uint8_t*>(bounce) + w, padded - w, static_cast<off_t>(p.offset + done + w));
          if (got < 0 && errno == EINTR) continue;
          if (got <= 0) err = fail(got < 0 ? errno : EIO, "cannot write");
          else w += static_cast<size_t>(got);
        }
        done += n;
      }
    }
    if (err == 0 && ftruncate(fd, static_cast<off_t>(length_)) != 0) err = fail(errno, "cannot size");
    if (err == 0 && fdatasync(fd) != 0) err = fail(errno, "cannot sync");
    if (close(fd) != 0 && err == 0) err = fail(errno, "cannot close");
    return err;
  }
  int fail(int err, const char* what) {
    failed_ = path_ + ": " + what + ": " + errnoText(err);
    return err;
  }

  Napi::Promise::Deferred deferred_;
  std::string failed_;
  std::string path_;
  std::vector<Piece> pieces_;
  // The pieces' arrays, held until the write is done (released on the JS thread with the worker).
  std::vector<Napi::ObjectReference> holds_;
  size_t length_;
};

}  // namespace

// writeFileDirect(path, pieces: {data: ArrayBufferView, offset}[], length)
// → a promise of the file written (see the file's comment): offsets
// multiples of 4 KiB, in order, each piece's bytes rounded up to 4 KiB
// before the next offset, the last within `length` (a multiple of 4 KiB,
// the file's size). The arrays are held, unchanged, until it settles.
Napi::Value writeFileDirectBinding(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const char* usage = "writeFileDirect(path: string, pieces: {data: ArrayBufferView, offset: number}[], length: number)";
  if (info.Length() < 3 || !info[0].IsString() || !info[1].IsArray() || !info[2].IsNumber()) throw Napi::TypeError::New(env, usage);
  const double length = info[2].As<Napi::Number>().DoubleValue();
  if (!(length >= 0 && length <= 1e15) || static_cast<size_t>(length) % kBlock != 0)
    throw Napi::RangeError::New(env, "writeFileDirect: length must be a multiple of 4096");
  const Napi::Array list = info[1].As<Napi::Array>();
  std::vector<Piece> pieces;
  std::vector<Napi::ObjectReference> holds;
  size_t end = 0;
  for (uint32_t i = 0; i < list.Length(); i++) {
    const Napi::Value v = list.Get(i);
    const Napi::Value data = v.IsObject() ? v.As<Napi::Object>().Get("data") : env.Undefined();
    if (!data.IsTypedArray())
      throw Napi::TypeError::New(env, "writeFileDirect: pieces[" + std::to_string(i) + "].data must be a typed array");
    const double offset = v.As<Napi::Object>().Get("offset").ToNumber().DoubleValue();
    const Napi::TypedArray a = data.As<Napi::TypedArray>();
    const size_t bytes = a.ByteLength();
    if (!(offset >= 0 && offset <= 1e15) || static_cast<size_t>(offset) % kBlock != 0 || static_cast<size_t>(offset) < end)
      throw Napi::RangeError::New(
          env, "writeFileDirect: pieces[" + std::to_string(i) + "].offset must be a multiple of 4096, after the piece before");
    end = static_cast<size_t>(offset) + (bytes + kBlock - 1) / kBlock * kBlock;
    if (end > static_cast<size_t>(length))
      throw Napi::RangeError::New(env, "writeFileDirect: pieces[" + std::to_string(i) + "] ends past length");
    pieces.push_back({static_cast<const uint8_t*>(a.ArrayBuffer().Data()) + a.ByteOffset(), bytes, static_cast<size_t>(offset)});
    holds.push_back(Napi::Persistent(data.As<Napi::Object>()));
  }
  auto* w = new DirectWriter(env, info[0].As<Napi::String>().Utf8Value(), std::move(pieces), std::move(holds), static_cast<size_t>(length));
  Napi::Promise promise = w->promise();
  w->Queue();
  return promise;
}

// mapFile(path, views: {offset, bytes}[]) → ArrayBuffer[] (one per view,
// over the file's bytes [offset, offset + bytes)), or null where this
// runtime refuses ArrayBuffers over outside memory (Electron's V8 sandbox):
// the caller then reads the file as it would without. Offsets must be
// multiples of the page size; a view past the file's end, or a file that
// cannot be opened or mapped, throws naming the file.
Napi::Value mapFileBinding(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsString() || !info[1].IsArray())
    throw Napi::TypeError::New(env, "mapFile(path: string, views: {offset: number, bytes: number}[])");
  const std::string path = info[0].As<Napi::String>().Utf8Value();
  const Napi::Array list = info[1].As<Napi::Array>();
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::vector<std::pair<size_t, size_t>> views;
  size_t end = 0;
  for (uint32_t i = 0; i < list.Length(); i++) {
    const Napi::Value v = list.Get(i);
    if (!v.IsObject()) throw Napi::TypeError::New(env, "mapFile: views[" + std::to_string(i) + "] must be {offset, bytes}");
    const Napi::Object o = v.As<Napi::Object>();
    const double offset = o.Get("offset").ToNumber().DoubleValue();
    const double bytes = o.Get("bytes").ToNumber().DoubleValue();
    if (!(offset >= 0 && offset <= 1e15 && bytes >= 0 && bytes <= 1e15) || static_cast<size_t>(offset) % page != 0)
      throw Napi::RangeError::New(env, "mapFile: views[" + std::to_string(i) + "]: offset a multiple of the page size, bytes ≥ 0");
    views.emplace_back(static_cast<size_t>(offset), static_cast<size_t>(bytes));
    end = std::max(end, static_cast<size_t>(offset) + static_cast<size_t>(bytes));
  }
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Napi::Error::New(env, path + ": cannot open: " + errnoText(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0 || static_cast<size_t>(st.st_size) < end) {
    close(fd);
    throw Napi::Error::New(env, path + ": shorter than its views (" + std::to_string(st.st_size) + " < " + std::to_string(end) + " bytes)");
  }
  auto* m = new Mapping();
  m->bytes = std::max<size_t>(end, 1);
  m->base = mmap(nullptr, m->bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  const int mapErrno = errno;
  close(fd);
  if (m->base == MAP_FAILED) {
    delete m;
    throw Napi::Error::New(env, path + ": cannot map: " + errnoText(mapErrno));
  }
  // Read ahead where the file is not in the page cache yet (a cold run); where it is, this finds the pages there.
  madvise(m->base, m->bytes, MADV_WILLNEED);
  Napi::Array out = Napi::Array::New(env, views.size());
  // The map's own reference while the views are made: released below, so that the last view collected unmaps it.
  m->views = 1;
  for (size_t i = 0; i < views.size(); i++) {
    napi_value buffer;
    void* data = static_cast<uint8_t*>(m->base) + views[i].first;
    m->views++;
    const napi_status status = napi_create_external_arraybuffer(env, data, views[i].second, releaseView, m, &buffer);
    if (status != napi_ok) {
      m->views--;
      releaseView(env, nullptr, m);
      if (status == napi_no_external_buffers_allowed) return env.Null();
      throw Napi::Error::New(env, path + ": cannot make a view of its map (napi status " + std::to_string(status) + ")");
    }
    out.Set(static_cast<uint32_t>(i), Napi::Value(env, buffer));
  }
  releaseView(env, nullptr, m);
  return out;
}

}  // namespace streamscope::addon
