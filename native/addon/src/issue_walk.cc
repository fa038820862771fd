// The host model's walk in issue order (profiler/analysis/replay/replay-host.ts
// says what it infers, and builds what it reads): the calls by start, the
// ops without a call merged in by their own start; each op issued (its place
// in the order, when what it depended on ended in the recording), each
// outer call's wait inferred (its own blocking copy, else what its name
// synchronizes if that completed while it ran) and its CPU time without
// the wait. One pass over 10 M calls and ops took ~0.4 s of JavaScript on
// the what-if thread, between the columns and the fix's replay; the same
// steps here, in the same order, with JavaScript's Math.max and Math.min
// (js_math.h), give the same values to the bit.
#include "issue_walk.h"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "js_math.h"
#include "small_int_map.h"
#include "trace_codes.h"
#include "typed_arrays.h"

namespace streamscope::addon {

namespace {

using namespace trace_code;

// What the walk reads and writes: replay-host.ts names each (issueWalk).
struct Inputs {
  size_t n, nc, streams, contexts, threads;
  bool allOpsHaveCalls;
  int32_t legacyFlag, notBlockingFlags;  // streams.flags bits: the legacy default stream; streams not blocking
  double minCallCostNs, clockSlackNs;
  const double *opStart, *opEnd;
  const uint8_t *isAsync, *kind, *category;
  const int32_t *detail, *opCall, *streamOfOp, *ctxOfOp, *streamFlags, *streamPid, *ctxPid;
  const double *callStart, *callEnd;
  const int32_t *callPid, *callName;
  const int32_t* nameIds;
  const uint8_t* nameClasses;
  size_t names;
  const int32_t *callOrder, *firstOp, *callOps, *threadOf, *outer;
  // Event records and stream waits that name a stream (and, a wait, an event), each list in the host's order.
  size_t records, waits;
  const int32_t *recordCall, *recordPid, *recordStream;
  const double* recordEvent;
  const int32_t *waitCall, *waitPid, *waitStream;
  const double* waitEvent;
  // Outputs.
  int32_t *order, *callPos, *waitArg, *waitCtx, *lastOfStream, *eventPos, *eventSeq;
  uint8_t *waitKind, *waitsOwn;
  double *cost, *depEnd;
};

// Name id → NameClass (-1 where the name is not known: Math.max with NameClass.Other makes it Other).
SmallIntMap<int8_t> nameClasses(const int32_t* ids, const uint8_t* classes, size_t n) {
  SmallIntMap<int8_t> m;
  for (size_t x = 0; x < n; x++) m.set(ids[x], static_cast<int8_t>(classes[x]));
  return m;
}

// Per process (its pid), the dense indexes whose process it is, in index order (indexesByPid).
std::unordered_map<int32_t, std::vector<int32_t>> indexesByPid(const int32_t* pidOf, size_t n) {
  std::unordered_map<int32_t, std::vector<int32_t>> byPid;
  for (size_t x = 0; x < n; x++) byPid[pidOf[x]].push_back(static_cast<int32_t>(x));
  return byPid;
}

// Each call's entries of a list by call (records, waits), in the list's order. The lists are short beside the calls
// (a few records per step, none in many programs) and the walk visits the calls in index order, where their starts
// are (the usual case): the entries sorted by call, a cursor finds each call's. An index per call is made only for a
// walk in another order: at 10 M calls it is two arrays of their length per list, 160 MB written and read on the
// what-if thread's path.
class ByCall {
 public:
  ByCall(const int32_t* callOf, size_t n, size_t nc, bool ascending) : entries_(n) {
    for (size_t x = 0; x < n; x++) entries_[x] = static_cast<int32_t>(x);
    std::stable_sort(entries_.begin(), entries_.end(), [&](int32_t a, int32_t b) { return callOf[a] < callOf[b]; });
    if (ascending) {
      calls_.resize(n);
      for (size_t x = 0; x < n; x++) calls_[x] = callOf[entries_[x]];
    } else if (n > 0) {
      first_.assign(nc + 1, 0);
      for (size_t x = 0; x < n; x++) first_[static_cast<size_t>(callOf[x]) + 1]++;
      for (size_t k = 0; k < nc; k++) first_[k + 1] += first_[k];
    }
  }
  // Call k's entries, entries()[first .. last). In index order: k above every call asked for before.
  std::pair<size_t, size_t> of(int32_t k) {
    if (!first_.empty())
      return {static_cast<size_t>(first_[static_cast<size_t>(k)]), static_cast<size_t>(first_[static_cast<size_t>(k) + 1])};
    size_t first = cursor_;
    while (first < calls_.size() && calls_[first] < k) first++;
    size_t last = first;
    while (last < calls_.size() && calls_[last] == k) last++;
    cursor_ = last;
    return {first, last};
  }
  const std::vector<int32_t>& entries() const { return entries_; }

 private:
  std::vector<int32_t> entries_, calls_, first_;
  size_t cursor_ = 0;
};

// What each CUDA event of a process captured, in the order its events were first recorded (a Map's order, which an
// event synchronize's candidates are read in): eventId → op.
struct Captured {
  std::unordered_map<double, size_t> slot;
  std::vector<int32_t> ops;
  void set(double event, int32_t op) {
    const auto [it, fresh] = slot.try_emplace(event, ops.size());
    if (fresh) ops.push_back(op);
    else ops[it->second] = op;
  }
  // The op event `event` captured, or -2 where it recorded none.
  int32_t get(double event) const {
    const auto it = slot.find(event);
    return it == slot.end() ? -2 : ops[it->second];
  }
};

class Walk {
 public:
  explicit Walk(const Inputs& in)
      : in_(in),
        names_(nameClasses(in.nameIds, in.nameClasses, in.names)),
        streamsOfPid_(indexesByPid(in.streamPid, in.streams)),
        ctxsOfPid_(indexesByPid(in.ctxPid, in.contexts)),
        recordsOf_(in.recordCall, in.records, in.nc, in.callOrder == nullptr),
        waitsOf_(in.waitCall, in.waits, in.nc, in.callOrder == nullptr),
        loose_(in.allOpsHaveCalls ? in.n : 0),
        ctxCount_(in.contexts, 0),
        ctxMaxEnd_(in.contexts, -kInf),
        threadStream_(in.threads, -1),
        threadCtx_(in.threads, -1),
        waitEnd_(in.streams, -kInf),
        blockingMaxEnd_(in.contexts, -kInf),
        legacyEnd_(in.contexts, -kInf) {
    for (size_t s = 0; s < in.streams; s++) in.lastOfStream[s] = -1;
  }

  void run() {
    for (size_t r = 0; r < in_.nc; r++) {
      const int32_t k = in_.callOrder ? in_.callOrder[r] : static_cast<int32_t>(r);
      emitLooseBefore(in_.callStart[k]);
      in_.callPos[k] = pos_;
      const int32_t t = in_.threadOf ? in_.threadOf[k] : 0;
      eventsOfCall(k);
      const int32_t blockingOwn = emitOpsOfCall(k, t);
      if (in_.outer[k] == k) inferWait(k, t, blockingOwn);  // nested calls are part of their outer call's time
    }
    emitLooseBefore(kInf);
  }

 private:
  bool isPageableCopy(int32_t i) const {
    if (in_.kind[i] != kMemcpy) return false;
    const uint8_t c = in_.category[i];
    return (c == kHtoD && in_.detail[i] >> 4 == kPageable) || (c == kDtoH && (in_.detail[i] & 15) == kPageable);
  }

  // Did a wait target that ended at `w` end while the call [start, end] ran (clocks agree to clockSlackNs)?
  bool inWindow(double w, double start, double end) const { return w >= start - in_.clockSlackNs && w <= end + in_.clockSlackNs; }

  // Op i (-1: none) if it ended inside the call [start, end] and after op `best` (-1: none), else `best`.
  int32_t laterInside(int32_t best, int32_t i, double start, double end) const {
    return i >= 0 && inWindow(in_.opEnd[i], start, end) && (best < 0 || in_.opEnd[i] > in_.opEnd[best]) ? i : best;
  }

  // Issues op i (of thread t; -1: no call's): its place in the order, when what it depended on ended (its stream's
  // previous op, an awaited event, the legacy barrier), its stream's and context's state.
  void emit(int32_t i, int32_t t) {
    const double* opEnd = in_.opEnd;
    // An op issued twice (a call order or a call's ops built wrong) would run past the order.
    if (static_cast<size_t>(pos_) >= in_.n) throw std::out_of_range("issueWalk: an op issued twice");
    in_.order[pos_++] = i;
    const int32_t s = in_.streamOfOp[i];
    const int32_t c = in_.ctxOfOp[i];
    const int32_t last = in_.lastOfStream[s];
    double dep = jsMax(last >= 0 ? opEnd[last] : -kInf, waitEnd_[s]);
    waitEnd_[s] = -kInf;
    const int32_t flags = in_.streamFlags[s];
    if (flags & in_.legacyFlag) {
      dep = jsMax(dep, blockingMaxEnd_[c]);
      legacyEnd_[c] = opEnd[i];
    } else if (!(flags & in_.notBlockingFlags)) {
      dep = jsMax(dep, legacyEnd_[c]);
      blockingMaxEnd_[c] = jsMax(blockingMaxEnd_[c], opEnd[i]);
    }
    in_.depEnd[i] = dep;
    in_.lastOfStream[s] = i;
    ctxCount_[c]++;
    if (opEnd[i] > ctxMaxEnd_[c]) ctxMaxEnd_[c] = opEnd[i];
    if (t >= 0) {
      threadStream_[t] = s;
      threadCtx_[t] = c;
    }
  }

  // Issues the ops without a call that start before `time`.
  void emitLooseBefore(double time) {
    size_t loose = loose_;
    while (loose < in_.n && (in_.opCall[loose] >= 0 || in_.opStart[loose] < time)) {
      if (in_.opCall[loose] < 0) emit(static_cast<int32_t>(loose), -1);
      loose++;
    }
    loose_ = loose;
  }

  // Call k's event records, then its stream waits: their place in the issue order (eventPos, in eventSeq's order:
  // records as their index, waits as records + theirs), what each event captured, what each wait makes its stream's
  // next op wait for.
  void eventsOfCall(int32_t k) {
    const auto [r0, r1] = recordsOf_.of(k);
    const auto [w0, w1] = waitsOf_.of(k);
    if (seq_ + (r1 - r0) + (w1 - w0) > in_.records + in_.waits) throw std::out_of_range("issueWalk: a call walked twice");
    for (size_t x = r0; x < r1; x++) {
      const int32_t e = recordsOf_.entries()[x];
      in_.eventSeq[seq_] = e;
      in_.eventPos[seq_++] = pos_;
      const int32_t s = in_.recordStream[e];
      captured_[in_.recordPid[e]].set(in_.recordEvent[e], s < 0 ? -1 : in_.lastOfStream[s]);
    }
    for (size_t x = w0; x < w1; x++) {
      const int32_t w = waitsOf_.entries()[x];
      in_.eventSeq[seq_] = static_cast<int32_t>(in_.records) + w;
      in_.eventPos[seq_++] = pos_;
      const int32_t s = in_.waitStream[w];
      const auto m = captured_.find(in_.waitPid[w]);
      const int32_t c = m == captured_.end() ? -2 : m->second.get(in_.waitEvent[w]);
      if (s >= 0 && c >= 0) waitEnd_[s] = jsMax(waitEnd_[s], in_.opEnd[c]);
    }
  }

  // Issues call k's own ops (thread t's); returns the last of them that blocks the call (a synchronous or pageable
  // copy), or -1.
  int32_t emitOpsOfCall(int32_t k, int32_t t) {
    if (!in_.firstOp) {
      from_ = nextOp_;
      size_t next = nextOp_;
      while (next < in_.n && in_.opCall[next] == k) next++;
      to_ = nextOp_ = next;
    } else {
      from_ = static_cast<size_t>(in_.firstOp[k]);
      to_ = static_cast<size_t>(in_.firstOp[k + 1]);
    }
    int32_t blockingOwn = -1;
    for (size_t j = from_; j < to_; j++) {
      const int32_t i = in_.callOps ? in_.callOps[j] : static_cast<int32_t>(j);
      emit(i, t);
      if (in_.isAsync[i] == 0 || isPageableCopy(i)) blockingOwn = i;
    }
    return blockingOwn;
  }

  // What outer call k (thread t's) waited for and its CPU time without the wait: its own blocking op (`blockingOwn`,
  // -1: none), else what its name synchronizes (a context, a stream, an event) if that completed while it ran.
  void inferWait(int32_t k, int32_t t, int32_t blockingOwn) {
    uint8_t kind = kWaitNone;
    int32_t target = -1;
    int32_t ctx = -1;
    double waitedUntil = -kInf;
    if (blockingOwn >= 0) {
      kind = kWaitOp;
      target = blockingOwn;
      in_.waitsOwn[k] = 1;
      for (size_t j = from_; j < to_; j++)
        waitedUntil = jsMax(waitedUntil, in_.opEnd[in_.callOps ? in_.callOps[j] : static_cast<int32_t>(j)]);
    } else {
      const int cls = std::max(static_cast<int>(kNameOther), static_cast<int>(names_.get(in_.callName[k])));
      if (cls == kNameDevice || cls == kNameImplicit) {
        ctx = syncedContext(k, t, cls);
        if (ctx >= 0) {
          kind = kWaitPrefix;
          target = ctxCount_[ctx];
          waitedUntil = ctxMaxEnd_[ctx];
        }
      } else if (cls == kNameStream || cls == kNameEvent) {
        target = awaitedOp(k, t, cls);
        if (target >= 0) {
          kind = kWaitOp;
          waitedUntil = in_.opEnd[target];
        }
      }
    }
    const double s = in_.callStart[k];
    const double e = in_.callEnd[k];
    if (kind != kWaitNone && waitedUntil > e + in_.clockSlackNs) kind = kWaitNone;  // it returned before: it did not wait for that
    // Only the calls that wait are written (the arrays come zeroed): the others' pages are never touched.
    if (kind != kWaitNone) {
      in_.waitKind[k] = kind;
      in_.waitArg[k] = target;
      if (ctx >= 0) in_.waitCtx[k] = ctx;
    }
    in_.cost[k] = kind == kWaitNone ? e - s : jsMax(in_.minCallCostNs, e - jsMin(e, jsMax(s, waitedUntil)));
  }

  // The context a device synchronize (or an implicit one) k waited for: the one of its process whose issued work
  // completed inside the call, latest first; else, for an explicit one, the thread's current one. -1: none.
  int32_t syncedContext(int32_t k, int32_t t, int cls) const {
    int32_t best = -1;
    const auto it = ctxsOfPid_.find(in_.callPid[k]);
    if (it != ctxsOfPid_.end()) {
      for (const int32_t c : it->second) {
        if (ctxCount_[c] > 0 && inWindow(ctxMaxEnd_[c], in_.callStart[k], in_.callEnd[k]) && (best < 0 || ctxMaxEnd_[c] > ctxMaxEnd_[best]))
          best = c;
      }
    }
    if (best < 0 && cls == kNameDevice) best = threadCtx_[t];
    return best;
  }

  // The op a stream or event synchronize k waited for: the one (the last of a stream of its process, or what an event
  // of its process captured) that completed inside the call, latest first; else the last op of the thread's current
  // stream. -1: none. The candidates are read where they are, not copied: a program may make millions of these calls.
  int32_t awaitedOp(int32_t k, int32_t t, int cls) const {
    const int32_t pid = in_.callPid[k];
    int32_t best = -1;
    if (cls == kNameStream) {
      const auto it = streamsOfPid_.find(pid);
      if (it != streamsOfPid_.end())
        for (const int32_t st : it->second) best = laterInside(best, in_.lastOfStream[st], in_.callStart[k], in_.callEnd[k]);
    } else {
      const auto it = captured_.find(pid);
      if (it != captured_.end())
        for (const int32_t i : it->second.ops) best = laterInside(best, i, in_.callStart[k], in_.callEnd[k]);
    }
    if (best < 0 && threadStream_[t] >= 0) best = in_.lastOfStream[threadStream_[t]];
    return best;
  }

  const Inputs& in_;
  const SmallIntMap<int8_t> names_;
  const std::unordered_map<int32_t, std::vector<int32_t>> streamsOfPid_, ctxsOfPid_;
  ByCall recordsOf_, waitsOf_;
  int32_t pos_ = 0;
  size_t seq_ = 0;
  size_t loose_;
  size_t nextOp_ = 0;
  size_t from_ = 0, to_ = 0;
  std::vector<int32_t> ctxCount_;
  std::vector<double> ctxMaxEnd_;
  std::vector<int32_t> threadStream_, threadCtx_;
  std::vector<double> waitEnd_, blockingMaxEnd_, legacyEnd_;
  std::unordered_map<int32_t, Captured> captured_;
};

}  // namespace

// issueWalk(inputs): replay-host.ts issueWalk builds the inputs and reads the outputs, all written in place.
Napi::Value issueWalkBinding(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const char* what = "issueWalk";
  const Napi::Object o = inputsOf(info, what);
  Inputs in{};
  const size_t n = in.n = count(o, what, "ops");
  const size_t nc = in.nc = count(o, what, "calls");
  in.streams = count(o, what, "streams");
  in.contexts = count(o, what, "contexts");
  in.threads = count(o, what, "threads");
  in.allOpsHaveCalls = o.Get("allOpsHaveCalls").ToBoolean();
  in.legacyFlag = static_cast<int32_t>(number(o, what, "legacyFlag"));
  in.notBlockingFlags = static_cast<int32_t>(number(o, what, "notBlockingFlags"));
  in.minCallCostNs = number(o, what, "minCallCostNs");
  in.clockSlackNs = number(o, what, "clockSlackNs");
  in.opStart = typedArrayOf<double>(o, what, "opStart", n);
  in.opEnd = typedArrayOf<double>(o, what, "opEnd", n);
  in.isAsync = typedArrayOf<uint8_t>(o, what, "isAsync", n);
  in.kind = typedArrayOf<uint8_t>(o, what, "kind", n);
  in.category = typedArrayOf<uint8_t>(o, what, "category", n);
  in.detail = typedArrayOf<int32_t>(o, what, "detail", n);
  in.opCall = typedArrayOf<int32_t>(o, what, "opCall", n);
  in.streamOfOp = typedArrayOf<int32_t>(o, what, "streamOfOp", n);
  in.ctxOfOp = typedArrayOf<int32_t>(o, what, "ctxOfOp", n);
  in.streamFlags = typedArrayOf<int32_t>(o, what, "streamFlags", in.streams);
  in.streamPid = typedArrayOf<int32_t>(o, what, "streamPid", in.streams);
  in.ctxPid = typedArrayOf<int32_t>(o, what, "ctxPid", in.contexts);
  in.callStart = typedArrayOf<double>(o, what, "callStart", nc);
  in.callEnd = typedArrayOf<double>(o, what, "callEnd", nc);
  in.callPid = typedArrayOf<int32_t>(o, what, "callPid", nc);
  in.callName = typedArrayOf<int32_t>(o, what, "callName", nc);
  in.nameIds = typedArray<int32_t>(o, what, "nameIds", in.names);
  in.nameClasses = typedArrayOf<uint8_t>(o, what, "nameClasses", in.names);
  in.callOrder = typedArrayOf<int32_t>(o, what, "callOrder", nc, true);
  in.firstOp = typedArrayOf<int32_t>(o, what, "firstOp", nc + 1, true);
  size_t callOpsLength = 0;
  in.callOps = typedArray<int32_t>(o, what, "callOps", callOpsLength, true);
  in.threadOf = typedArrayOf<int32_t>(o, what, "threadOf", nc, true);
  in.outer = typedArrayOf<int32_t>(o, what, "outer", nc);
  in.recordCall = typedArray<int32_t>(o, what, "recordCall", in.records);
  in.recordPid = typedArrayOf<int32_t>(o, what, "recordPid", in.records);
  in.recordStream = typedArrayOf<int32_t>(o, what, "recordStream", in.records);
  in.recordEvent = typedArrayOf<double>(o, what, "recordEvent", in.records);
  in.waitCall = typedArray<int32_t>(o, what, "waitCall", in.waits);
  in.waitPid = typedArrayOf<int32_t>(o, what, "waitPid", in.waits);
  in.waitStream = typedArrayOf<int32_t>(o, what, "waitStream", in.waits);
  in.waitEvent = typedArrayOf<double>(o, what, "waitEvent", in.waits);
  in.order = typedArrayOf<int32_t>(o, what, "order", n);
  in.callPos = typedArrayOf<int32_t>(o, what, "callPos", nc);
  in.waitKind = typedArrayOf<uint8_t>(o, what, "waitKind", nc);
  in.waitArg = typedArrayOf<int32_t>(o, what, "waitArg", nc);
  in.waitCtx = typedArrayOf<int32_t>(o, what, "waitCtx", nc);
  in.cost = typedArrayOf<double>(o, what, "cost", nc);
  in.waitsOwn = typedArrayOf<uint8_t>(o, what, "waitsOwn", nc);
  in.depEnd = typedArrayOf<double>(o, what, "depEnd", n);
  in.lastOfStream = typedArrayOf<int32_t>(o, what, "lastOfStream", in.streams);
  in.eventPos = typedArrayOf<int32_t>(o, what, "eventPos", in.records + in.waits);
  in.eventSeq = typedArrayOf<int32_t>(o, what, "eventSeq", in.records + in.waits);

  // Every index followed, within what it indexes.
  const int64_t N = static_cast<int64_t>(n), NC = static_cast<int64_t>(nc);
  if (nc > 0 && in.threads == 0) throw Napi::RangeError::New(env, "issueWalk: calls without a thread");
  checkIndexes(env, what, "opCall", in.opCall, n, -1, NC);
  checkIndexes(env, what, "streamOfOp", in.streamOfOp, n, 0, static_cast<int64_t>(in.streams));
  checkIndexes(env, what, "ctxOfOp", in.ctxOfOp, n, 0, static_cast<int64_t>(in.contexts));
  checkIndexes(env, what, "outer", in.outer, nc, 0, NC);
  if (in.callOrder) checkIndexes(env, what, "callOrder", in.callOrder, nc, 0, NC);
  if (in.firstOp) checkIndexes(env, what, "firstOp", in.firstOp, nc + 1, 0, static_cast<int64_t>(in.callOps ? callOpsLength : n) + 1);
  if (in.callOps) checkIndexes(env, what, "callOps", in.callOps, callOpsLength, 0, N);
  if (in.threadOf) checkIndexes(env, what, "threadOf", in.threadOf, nc, 0, static_cast<int64_t>(in.threads));
  checkIndexes(env, what, "recordCall", in.recordCall, in.records, 0, NC);
  checkIndexes(env, what, "recordStream", in.recordStream, in.records, -1, static_cast<int64_t>(in.streams));
  checkIndexes(env, what, "waitCall", in.waitCall, in.waits, 0, NC);
  checkIndexes(env, what, "waitStream", in.waitStream, in.waits, -1, static_cast<int64_t>(in.streams));

  Walk(in).run();
  return env.Undefined();
}

}  // namespace streamscope::addon
