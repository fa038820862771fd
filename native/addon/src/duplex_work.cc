// Duplex contention's passes over every operation (profiler/analysis/bandwidth.ts
// says what they measure and holds the policy: the sample sizes, the
// medians, the factors' bounds): each op's time overlapped by pinned copies
// of the other direction on its device, the rates of the large pinned
// copies that ran alone or overlapped, and each op's uncontended work. At
// 10 M operations the three passes took ~0.25 s of JavaScript on the what-if
// thread, before the fix's replay can begin; the same arithmetic here, in
// the same order, with JavaScript's Math.min (js_math.h), gives the same
// values to the bit.
#include "duplex_work.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "js_math.h"
#include "trace_codes.h"
#include "typed_arrays.h"

namespace streamscope::addon {

namespace {

using namespace trace_code;

// bandwidth.ts DeviceSlots: devices.id → a dense slot in order of first sight, the last one found kept (a recording's
// copies mostly come from one device at a time).
class DeviceSlots {
 public:
  size_t slot(int32_t id) {
    if (last_ >= 0 && id == ids_[last_]) return last_;
    auto it = std::find(ids_.begin(), ids_.end(), id);
    if (it == ids_.end()) it = ids_.insert(ids_.end(), id);
    last_ = it - ids_.begin();
    return last_;
  }
  const std::vector<int32_t>& ids() const { return ids_; }

 private:
  std::vector<int32_t> ids_;
  ptrdiff_t last_ = -1;
};

// The op columns every pass reads.
struct Ops {
  size_t n;
  const uint8_t *kind, *category;
  const int32_t *detail, *device;
  const double *start, *end;
};

Ops opsOf(const Napi::Object& o, const char* what) {
  Ops ops{};
  ops.n = count(o, what, "ops");
  ops.kind = typedArrayOf<uint8_t>(o, what, "kind", ops.n);
  ops.category = typedArrayOf<uint8_t>(o, what, "category", ops.n);
  ops.detail = typedArrayOf<int32_t>(o, what, "detail", ops.n);
  ops.device = typedArrayOf<int32_t>(o, what, "device", ops.n);
  ops.start = typedArrayOf<double>(o, what, "start", ops.n);
  ops.end = typedArrayOf<double>(o, what, "end", ops.n);
  return ops;
}

}  // namespace

// duplexSamples(inputs) → {devices, slots, alone, over}: `overlap` written, per op the time pinned copies of the other
// direction on its device overlapped it, summed over them (above its duration where they overlapped each other; 0 for
// anything but such a copy). Then the large pinned copies (at least `largeBytes`, a positive duration) by the share of
// their time so overlapped: below `aloneBelow` their rate in alone[slot * 2 + direction], above `overAbove` in
// over[…], the first `samples` of each. slots: the device of each slot; devices: every op's device, in order of
// first sight.
Napi::Value duplexSamplesBinding(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const char* what = "duplexSamples";
  const Napi::Object o = inputsOf(info, what);
  const Ops ops = opsOf(o, what);
  const double* bytes = typedArrayOf<double>(o, what, "bytes", ops.n);
  double* overlap = typedArrayOf<double>(o, what, "overlap", ops.n);
  const double largeBytes = number(o, what, "largeBytes");
  const double aloneBelow = number(o, what, "aloneBelow");
  const double overAbove = number(o, what, "overAbove");
  const size_t samples = count(o, what, "samples");
  const size_t n = ops.n;

  // One pass in start order (ops are sorted by start). Per device and direction (slot * 2 + direction), the copies
  // still running: one engine per direction, so rarely more than one. Each overlapping pair is counted once, when the
  // later of the two starts, for both.
  DeviceSlots slots;
  std::vector<std::vector<int32_t>> open;
  for (size_t i = 0; i < n; i++) {
    overlap[i] = 0;
    const int dir = pinnedDirection(ops.kind[i], ops.category[i], ops.detail[i]);
    if (dir < 0) continue;
    const size_t key = slots.slot(ops.device[i]) * 2;
    if (key >= open.size()) open.resize(key + 2);
    const double start = ops.start[i];
    const double end = ops.end[i];
    std::vector<int32_t>& other = open[key + (1 - dir)];
    size_t w = 0;
    for (const int32_t j : other) {
      const double e = ops.end[j];
      if (e <= start) continue;
      other[w++] = j;
      const double shared = jsMin(end, e) - start;
      overlap[i] += shared;
      overlap[j] += shared;
    }
    other.resize(w);
    std::vector<int32_t>& mine = open[key + dir];
    mine.push_back(static_cast<int32_t>(i));
    if (mine.size() > 8) {
      w = 0;
      for (const int32_t j : mine)
        if (ops.end[j] > start) mine[w++] = j;
      mine.resize(w);
    }
  }

  // The samples, and the devices of the ops (consecutive ops mostly share one: each run looked up once).
  std::vector<int32_t> devices;
  DeviceSlots sampleSlots;
  std::vector<std::vector<double>> alone, over;
  for (size_t i = 0; i < n; i++) {
    if ((i == 0 || ops.device[i] != ops.device[i - 1]) && std::find(devices.begin(), devices.end(), ops.device[i]) == devices.end())
      devices.push_back(ops.device[i]);
    const double d = ops.end[i] - ops.start[i];
    if (bytes[i] < largeBytes || d <= 0) continue;
    const int dir = pinnedDirection(ops.kind[i], ops.category[i], ops.detail[i]);
    if (dir < 0) continue;
    const size_t key = sampleSlots.slot(ops.device[i]) * 2 + dir;
    if (key >= alone.size()) {
      alone.resize(key + 1);
      over.resize(key + 1);
    }
    const double share = overlap[i] / d;  // above 1: "over", as 1 is
    if (share < aloneBelow) {
      if (alone[key].size() < samples) alone[key].push_back(bytes[i] / d);
    } else if (share > overAbove && over[key].size() < samples) {
      over[key].push_back(bytes[i] / d);
    }
  }

  Napi::Object result = Napi::Object::New(env);
  result.Set("devices", numbersOf(env, devices));
  result.Set("slots", numbersOf(env, sampleSlots.ids()));
  result.Set("alone", listsOf(env, alone));
  result.Set("over", listsOf(env, over));
  return result;
}

// uncontendedDurations(inputs): `out` written, per op its duration had it run alone. A pinned copy that overlapped
// the other direction for `a` ns of its recorded duration D (`overlap`, clamped to D) did D − a(1 − f) ns of
// uncontended work, f its device's factor for its direction (factorDevices[x]'s htod[x] or dtoh[x]; a device not
// listed, defaultHtoD or defaultDtoH); other ops their recorded duration. `out` may be `overlap` itself.
Napi::Value uncontendedDurationsBinding(const Napi::CallbackInfo& info) {
  const char* what = "uncontendedDurations";
  const Napi::Object o = inputsOf(info, what);
  const Ops ops = opsOf(o, what);
  const double* overlap = typedArrayOf<double>(o, what, "overlap", ops.n);
  double* out = typedArrayOf<double>(o, what, "out", ops.n);
  size_t devices = 0;
  const int32_t* factorDevices = typedArray<int32_t>(o, what, "factorDevices", devices);
  const double* htod = typedArrayOf<double>(o, what, "htod", devices);
  const double* dtoh = typedArrayOf<double>(o, what, "dtoh", devices);
  const double defaultHtoD = number(o, what, "defaultHtoD");
  const double defaultDtoH = number(o, what, "defaultDtoH");
  // Where given, each op's (dense) stream: an op's work ends where the next on its stream began (replay-host.ts says
  // why), clipped in the same pass, its stream's latest op so far looked at as each op comes (in start order).
  const int32_t* streamOf = typedArrayOf<int32_t>(o, what, "streamOf", ops.n, true);
  const size_t streams = streamOf ? count(o, what, "streams") : 0;
  if (streamOf) checkIndexes(info.Env(), what, "streamOf", streamOf, ops.n, 0, static_cast<int64_t>(streams));
  std::vector<int32_t> last(streams, -1);
  std::vector<double> lastEnd(streams, -kInf);
  const auto clip = [&](size_t i) {
    const int32_t st = streamOf[i];
    const double a = ops.start[i];
    // Only the stream's latest op, still running past this start, is clipped.
    if (lastEnd[st] > a) {
      const int32_t p = last[st];
      out[p] = jsMin(out[p], jsMax(0, a - ops.start[p]));
    }
    last[st] = static_cast<int32_t>(i);
    lastEnd[st] = ops.end[i];
  };

  // Only copies that overlapped look their device's factors up, the last device's kept.
  bool looked = false;
  int32_t lastDevice = 0;
  double fHtoD = defaultHtoD, fDtoH = defaultDtoH;
  for (size_t i = 0; i < ops.n; i++) {
    const double d = ops.end[i] - ops.start[i];
    const double a = overlap[i];
    if (a <= 0) {
      out[i] = d;
    } else {
      if (!looked || ops.device[i] != lastDevice) {
        looked = true;
        lastDevice = ops.device[i];
        const int32_t* at = std::find(factorDevices, factorDevices + devices, lastDevice);
        const bool known = at != factorDevices + devices;
        fHtoD = known ? htod[at - factorDevices] : defaultHtoD;
        fDtoH = known ? dtoh[at - factorDevices] : defaultDtoH;
      }
      out[i] = d - jsMin(a, d) * (1 - (ops.category[i] == kHtoD ? fHtoD : fDtoH));
    }
    if (streamOf) clip(i);
  }
  return info.Env().Undefined();
}

}  // namespace streamscope::addon
