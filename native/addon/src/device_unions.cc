// Each device's busy time and the union of its operations
// (profiler/analysis/overlap.ts deviceUnions says what they serve: the
// diagnosis's context, the overlap factors, the Stats tab): one pass over
// the operations in start order, a union per device for compute, each copy
// direction and every op, the last one's intervals kept. At 10 M operations
// the pass took ~0.2 s of JavaScript on the analysing thread, before any
// rule can run; the same steps as overlap.ts BusyUnion, in the same order,
// give the same sums (test/addon/device-unions.test.ts holds the two to each
// other).
#include "device_unions.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <unordered_map>
#include <vector>

#include "trace_codes.h"
#include "typed_arrays.h"

namespace streamscope::addon {

namespace {

// overlap.ts BusyUnion: intervals in start order, their count, the sum of their lengths, the length of their union,
// one open interval kept; where `list` is given, the union's intervals written as they close.
struct BusyUnion {
  double count = 0, sum = 0, union_ = 0;
  double curStart = 0, curEnd = -std::numeric_limits<double>::infinity();
  double* list = nullptr;
  size_t n = 0;

  void add(double s, double e) {
    if (e < s) return;  // a malformed interval counts for nothing rather than negative time
    count++;
    sum += e - s;
    if (s > curEnd) {
      if (curEnd > curStart) close();
      curStart = s;
      curEnd = e;
    } else if (e > curEnd) {
      curEnd = e;
    }
  }
  void close() {
    union_ += curEnd - curStart;
    if (list) {
      list[n++] = curStart;
      list[n++] = curEnd;
    }
  }
  Napi::Object busy(Napi::Env env) const {
    Napi::Object b = Napi::Object::New(env);
    b.Set("count", count);
    b.Set("sum", sum);
    b.Set("union", union_ + (curEnd > curStart ? curEnd - curStart : 0));
    return b;
  }
};

struct Device {
  explicit Device(int32_t device) : id(device) {}
  int32_t id;
  size_t operations = 0;
  double pid = std::numeric_limits<double>::quiet_NaN();
  bool several = false;
  BusyUnion compute, htod, dtoh, all;
  Napi::Float64Array union_;
};

}  // namespace

// deviceUnions(inputs) → per device, in the order its first op comes: {deviceId, operations, pid (null where several
// processes' ops ran on it), compute, htod, dtoh, all ({count, sum, union}: overlap.ts Busy without its factor), union
// (the intervals of `all`, [s0, e0, s1, e1, …], the open one last, in `length` of its Float64Array)}.
Napi::Value deviceUnionsBinding(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const char* what = "deviceUnions";
  const Napi::Object o = inputsOf(info, what);
  const size_t n = count(o, what, "ops");
  const int32_t* device = typedArrayOf<int32_t>(o, what, "device", n);
  const int32_t* pid = typedArrayOf<int32_t>(o, what, "pid", n);
  const uint8_t* category = typedArrayOf<uint8_t>(o, what, "category", n);
  const double* start = typedArrayOf<double>(o, what, "start", n);
  const double* end = typedArrayOf<double>(o, what, "end", n);

  // The devices' operations counted first (room for their unions), then measured; each looked up where the device
  // changes from the op before.
  std::vector<Device> devices;
  std::unordered_map<int32_t, size_t> slot;
  auto slotOf = [&](int32_t id) {
    auto [it, fresh] = slot.try_emplace(id, devices.size());
    if (fresh) devices.emplace_back(id);
    return it->second;
  };
  for (size_t i = 0, d = 0; i < n; i++) {
    if (i == 0 || device[i] != device[i - 1]) d = slotOf(device[i]);
    devices[d].operations++;
  }
  for (Device& d : devices) {
    // Room for every op's interval and the open one (overlap.ts: new BusyUnion(count)).
    d.union_ = Napi::Float64Array::New(env, 2 * d.operations + 2);
    d.all.list = d.union_.Data();
  }
  for (size_t i = 0, d = 0; i < n; i++) {
    if (i == 0 || device[i] != device[i - 1]) d = slot.at(device[i]);
    Device& u = devices[d];
    if (static_cast<double>(pid[i]) != u.pid) {
      if (std::isnan(u.pid)) u.pid = pid[i];
      else u.several = true;
    }
    const double s = start[i], e = end[i];
    const uint8_t c = category[i];
    if (c == trace_code::kCompute) u.compute.add(s, e);
    else if (c == trace_code::kHtoD) u.htod.add(s, e);
    else if (c == trace_code::kDtoH) u.dtoh.add(s, e);
    u.all.add(s, e);
  }

  Napi::Array out = Napi::Array::New(env, devices.size());
  for (size_t k = 0; k < devices.size(); k++) {
    Device& d = devices[k];
    // The open interval written after the closed ones, not closed itself (overlap.ts BusyUnion.intervals).
    size_t listed = d.all.n;
    if (d.all.curEnd > d.all.curStart) {
      d.all.list[listed++] = d.all.curStart;
      d.all.list[listed++] = d.all.curEnd;
    }
    Napi::Object r = Napi::Object::New(env);
    r.Set("deviceId", d.id);
    r.Set("operations", static_cast<double>(d.operations));
    r.Set("pid", d.several ? env.Null() : Napi::Number::New(env, d.pid));
    r.Set("compute", d.compute.busy(env));
    r.Set("htod", d.htod.busy(env));
    r.Set("dtoh", d.dtoh.busy(env));
    r.Set("all", d.all.busy(env));
    r.Set("union", d.union_);
    r.Set("length", static_cast<double>(listed));
    out.Set(static_cast<uint32_t>(k), r);
  }
  return out;
}

}  // namespace streamscope::addon
