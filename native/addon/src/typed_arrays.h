// Typed arrays handed to the addon's computations over loaded columns
// (call_index.cc, replay_scheduler.cc, graph_capture.cc, issue_walk.cc):
// each read in place, its type checked, a wrong one refused by name; the
// inputs object they come in and the numbers beside them; the lists of
// numbers a pass hands back.
#pragma once

#include <napi.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>
#include <vector>

namespace streamscope::addon {

// The JS typed array of each element type read here.
template <typename T>
constexpr napi_typedarray_type kArrayType = napi_int32_array;
template <>
constexpr napi_typedarray_type kArrayType<uint32_t> = napi_uint32_array;
template <>
constexpr napi_typedarray_type kArrayType<uint8_t> = napi_uint8_array;
template <>
constexpr napi_typedarray_type kArrayType<float> = napi_float32_array;
template <>
constexpr napi_typedarray_type kArrayType<double> = napi_float64_array;

// Property `name` of `o`, a typed array of T (`what` names the call in the error); its data, `n` set to its length.
// Null where `optional` and the property is null or absent.
template <typename T>
T* typedArray(const Napi::Object& o, const char* what, const char* name, size_t& n, bool optional = false) {
  const Napi::Value v = o.Get(name);
  if (optional && (v.IsNull() || v.IsUndefined())) {
    n = 0;
    return nullptr;
  }
  if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != kArrayType<T>)
    throw Napi::TypeError::New(o.Env(), std::string(what) + ": " + name + " is not a typed array of its type");
  auto a = v.As<Napi::TypedArrayOf<T>>();
  n = a.ElementLength();
  return a.Data();
}

// As typedArray, holding at least `n` elements. (An empty array's data may be null: whether one was given is asked
// of the property, not of its data, else an empty one where n are needed went unrefused and was read.)
template <typename T>
T* typedArrayOf(const Napi::Object& o, const char* what, const char* name, size_t n, bool optional = false) {
  if (optional) {
    const Napi::Value v = o.Get(name);
    if (v.IsNull() || v.IsUndefined()) return nullptr;
  }
  size_t length = 0;
  T* data = typedArray<T>(o, what, name, length);
  if (length < n) throw Napi::RangeError::New(o.Env(), std::string(what) + ": " + name + " is too short");
  return data;
}

// A native pass's one argument, the object of its inputs by name (`what` names the call in the error).
inline Napi::Object inputsOf(const Napi::CallbackInfo& info, const char* what) {
  if (info.Length() < 1 || !info[0].IsObject()) throw Napi::TypeError::New(info.Env(), std::string(what) + "(inputs)");
  return info[0].As<Napi::Object>();
}

// Property `name` of `o`, a number (`what` names the call in the error).
inline double number(const Napi::Object& o, const char* what, const char* name) {
  const Napi::Value v = o.Get(name);
  if (!v.IsNumber()) throw Napi::TypeError::New(o.Env(), std::string(what) + ": " + name + " is not a number");
  return v.As<Napi::Number>().DoubleValue();
}

// Property `name` of `o`, a count: a number not below 0.
inline size_t count(const Napi::Object& o, const char* what, const char* name) {
  const double v = number(o, what, name);
  if (!(v >= 0)) throw Napi::TypeError::New(o.Env(), std::string(what) + ": " + name + " is not a count");
  return static_cast<size_t>(v);
}

// Every one of the n indexes in `a` within [lo, hi): what the computations
// index other arrays with, checked once up front, so that an array built
// wrong is refused by name rather than read past its end.
// One index, name[i], within [lo, hi).
[[noreturn]] [[gnu::noinline]] inline void outsideRange(Napi::Env env, const char* what, const char* name, size_t i, int32_t value,
                                                        int64_t lo, int64_t hi) {
  throw Napi::RangeError::New(env, std::string(what) + ": " + name + "[" + std::to_string(i) + "] = " + std::to_string(value) +
                                       " is outside " + std::to_string(lo) + ".." + std::to_string(hi - 1));
}
inline void checkIndex(Napi::Env env, const char* what, const char* name, size_t i, int32_t value, int64_t lo, int64_t hi) {
  if (value < lo || value >= hi) [[unlikely]]
    outsideRange(env, what, name, i, value, lo, hi);
}

// Every element within [lo, hi) checked in one pass first, the offending element looked for only when one is out
// of range. The pass asks (x - lo) < (hi - lo) of unsigned 32-bit numbers, true exactly for lo <= x < hi when both
// bounds fit an int32's range (a value below lo wraps to one at least hi - lo), and ORs the answers into 16 lanes a
// block at a time: a loop of fixed length, which the compiler turns into vector instructions at -O2 with the
// baseline x86-64 ones. ~1.6 ms per 10 M indexes, where a running least and greatest took ~7 (scalar compares and
// conditional moves) and a call per element ~25; the replay checks ~15 arrays of 10 M.
inline void checkIndexes(Napi::Env env, const char* what, const char* name, const int32_t* a, size_t n, int64_t lo, int64_t hi) {
  if (n == 0) return;
  if (lo >= INT32_MIN && hi <= int64_t{INT32_MAX} + 1 && hi > lo) {
    const uint32_t base = static_cast<uint32_t>(static_cast<int32_t>(lo));
    const uint32_t range = static_cast<uint32_t>(hi - lo);
    constexpr size_t kLanes = 16;
    uint32_t lanes[kLanes] = {};
    size_t i = 0;
    for (; i + kLanes <= n; i += kLanes)
      for (size_t j = 0; j < kLanes; j++) lanes[j] |= static_cast<uint32_t>(static_cast<uint32_t>(a[i + j]) - base >= range);
    uint32_t outside = 0;
    for (; i < n; i++) outside |= static_cast<uint32_t>(static_cast<uint32_t>(a[i]) - base >= range);
    for (size_t j = 0; j < kLanes; j++) outside |= lanes[j];
    if (outside == 0) return;
  }
  for (size_t i = 0; i < n; i++) checkIndex(env, what, name, i, a[i], lo, hi);
}

// One Int32Array of a list of them (`list`, a row of `what`'s property `name`): its data and length.
struct IndexList {
  const int32_t* data;
  size_t length;
};

// Property `name` of `o`, a JS array of Int32Arrays of indexes (each device's ops, each thread's calls), every index
// within [lo, hi): checked before the pass begins, as checkIndexes does for one array.
inline std::vector<IndexList> indexListsOf(const Napi::Object& o, const char* what, const char* name, int64_t lo, int64_t hi) {
  const Napi::Env env = o.Env();
  const Napi::Value v = o.Get(name);
  if (!v.IsArray()) throw Napi::TypeError::New(env, std::string(what) + ": " + name + " is not an array");
  const Napi::Array lists = v.As<Napi::Array>();
  std::vector<IndexList> out;
  out.reserve(lists.Length());
  for (uint32_t t = 0; t < lists.Length(); t++) {
    const Napi::Value list = lists.Get(t);
    if (!list.IsTypedArray() || list.As<Napi::TypedArray>().TypedArrayType() != napi_int32_array)
      throw Napi::TypeError::New(env, std::string(what) + ": " + name + "[" + std::to_string(t) + "] is not an Int32Array");
    const auto a = list.As<Napi::Int32Array>();
    out.push_back({a.Data(), a.ElementLength()});
    checkIndexes(env, what, name, out.back().data, out.back().length, lo, hi);
  }
  return out;
}

// `values` as a JS array of numbers (a pass's samples, its devices, the ops it lists).
template <typename T>
Napi::Array numbersOf(Napi::Env env, const std::vector<T>& values) {
  Napi::Array a = Napi::Array::New(env, values.size());
  for (size_t i = 0; i < values.size(); i++) a.Set(static_cast<uint32_t>(i), static_cast<double>(values[i]));
  return a;
}

// `lists` as a JS array of arrays of numbers.
inline Napi::Array listsOf(Napi::Env env, const std::vector<std::vector<double>>& lists) {
  Napi::Array a = Napi::Array::New(env, lists.size());
  for (size_t k = 0; k < lists.size(); k++) a.Set(static_cast<uint32_t>(k), numbersOf(env, lists[k]));
  return a;
}

}  // namespace streamscope::addon
