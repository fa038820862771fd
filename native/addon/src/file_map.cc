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
#include "file_map.h"

#include <fcntl.h>
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

}  // namespace

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
