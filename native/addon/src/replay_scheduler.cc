// The what-if replay's scheduler: the discrete-event simulation itself
// (profiler/analysis/replay/replay.ts says what it models; replay-host.ts,
// replay-graph.ts and replay-resources.ts build what it reads). Host threads
// make their calls in order and issue the calls' ops; an op whose
// dependencies are met waits out its launch latency, takes its resource or
// queues for it, runs, and on completion releases its dependents, hands its
// resource over, and wakes the host threads that waited for it. Events are
// processed in (time, code) order.
//
// An op's way through it:
//   pending edges → 0: release   (the legacy barrier may hold it: legacyWaiter)
//   its earliest start: acquire  (READY event; the resource may queue it)
//   resource held: begin         (BEGIN event after an engine handoff)
//   its end: complete            (the completion event)
//
// Why native: at 10 M operations the simulation took ~1 s of JavaScript,
// the last second of a diagnosis whose fix's what-if waits for it. The
// arithmetic is JavaScript's, operation for operation (doubles, the same
// order, no fused multiply-add: binding.gyp), and so are the results, to
// the bit: the replays of every recording among the fixtures were checked
// against the JavaScript scheduler this replaced, and
// test/analysis/replay-identity.test.ts pins them.
#include "replay_scheduler.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "js_math.h"
#include "trace_codes.h"
#include "typed_arrays.h"

namespace streamscope::addon {

namespace {

// Event codes: the op index, plus BEGIN when it starts on a resource it
// already holds (a queued copy after the engine's handoff gap, or a stream's
// next copy the engine goes on with), READY when it may request its
// resource; neither: it completes. At equal times completions (the smaller
// codes) come first, so a freed engine or SMs are seen by the ops that
// become ready then.
constexpr int32_t kBegin = 1 << 29;
constexpr int32_t kReady = 2 << 29;
constexpr int32_t kOpMask = kBegin - 1;

using trace_code::kKernel;
using trace_code::kNoShare;
using trace_code::kWaitNone;
using trace_code::kWaitOp;

// replay-resources.ts: two kernels' shares fit together up to this much
// above 1 (float error).
constexpr double kShareSlack = 1e-9;

inline bool before(double t, int32_t c, double t2, int32_t c2) { return t < t2 || (t == t2 && c < c2); }

// A 4-ary min-heap of (time, code): half the depth of a binary heap. Ties
// by code (completions before readiness, then by op): deterministic.
class EventHeap {
 public:
  std::vector<double> time;
  std::vector<int32_t> code;
  size_t size = 0;

  void push(double t, int32_t c) {
    if (size == time.size()) {
      time.resize(std::max<size_t>(1024, size * 2));
      code.resize(time.size());
    }
    size_t i = size++;
    while (i > 0) {
      const size_t p = (i - 1) >> 2;
      if (time[p] < t || (time[p] == t && code[p] <= c)) break;
      time[i] = time[p];
      code[i] = code[p];
      i = p;
    }
    time[i] = t;
    code[i] = c;
  }
  // The top's time was raised in place: moves it down to where it now belongs.
  void siftTop() { sink(time[0], code[0], size); }
  // Removes the minimum (read it from time[0], code[0] first).
  void pop() {
    const size_t n = --size;
    sink(time[n], code[n], n);
  }

 private:
  void sink(double t, int32_t c, size_t n) {
    size_t i = 0;
    for (;;) {
      const size_t first = 4 * i + 1;
      if (first >= n) break;
      size_t m = first;
      double tm = time[first];
      const size_t last = first + 4 < n ? first + 4 : n;
      for (size_t j = first + 1; j < last; j++)
        if (time[j] < tm || (time[j] == tm && code[j] < code[m])) {
          m = j;
          tm = time[j];
        }
      if (t < tm || (t == tm && c <= code[m])) break;
      time[i] = tm;
      code[i] = code[m];
      i = m;
    }
    time[i] = t;
    code[i] = c;
  }
};

// A run of events queued in (time, code) order, a FIFO: a host thread issues
// its ops with readiness times that mostly grow, and ops that run at full
// speed mostly complete in the order they began. An event that would come
// before the last one queued is refused (the caller queues it on the heap).
class EventRun {
 public:
  std::vector<double> time;
  std::vector<int32_t> code;
  size_t head = 0;

  // Whether it holds an event that comes before (t, c), or any event where `any`.
  bool leads(double t, int32_t c, bool any) const {
    if (head == time.size()) return false;
    return any || before(time[head], code[head], t, c);
  }
  bool append(double t, int32_t c) {
    if (head < time.size()) {
      if (before(t, c, time.back(), code.back())) return false;
    } else {
      time.clear();
      code.clear();
      head = 0;
    }
    if (head > 4096 && head * 2 > time.size()) {
      // Most of it taken: slide the events left to the front.
      time.erase(time.begin(), time.begin() + static_cast<ptrdiff_t>(head));
      code.erase(code.begin(), code.begin() + static_cast<ptrdiff_t>(head));
      head = 0;
    }
    time.push_back(t);
    code.push_back(c);
    return true;
  }
};

// How much of each context's list of ops has completed, as a prefix: the
// lists are ops[first[c] .. end[c]).
class CompletedPrefix {
 public:
  CompletedPrefix() = default;
  CompletedPrefix(const int32_t* ops, const int32_t* first, const int32_t* end, size_t contexts)
      : ops_(ops), first_(first), end_(end), next_(first, first + contexts) {}
  int32_t count(int32_t c) const { return next_[c] - first_[c]; }
  int32_t advance(int32_t c, const uint8_t* done) {
    const int32_t e = end_[c];
    int32_t p = next_[c];
    while (p < e && done[ops_[p]]) p++;
    next_[c] = p;
    return p - first_[c];
  }

 private:
  const int32_t* ops_ = nullptr;
  const int32_t* first_ = nullptr;
  const int32_t* end_ = nullptr;
  std::vector<int32_t> next_;
};

// Everything the replay reads and writes, as replay.ts hands it over.
struct Inputs {
  size_t n = 0, calls = 0, devices = 0, contexts = 0, threads = 0;
  // Per op: the recording, the host model, the resources (replay-resources.ts opResources).
  const uint8_t* kind;
  const double* opStart;
  const int32_t* devOf;
  const int32_t* ctxOfOp;
  const int32_t* opCall;
  const double* work;
  const int32_t* engine;
  const float* share;
  const uint8_t* duplex;
  // The graph (replay-graph.ts); `pending` counts down.
  int32_t* pending;
  const int32_t* nextInStream;
  const int32_t* opStream;
  const uint8_t* isLegacyStream;
  const uint8_t* isBlockingStream;
  const int32_t* edgeStart;
  const int32_t* edgeTo;
  size_t edges = 0;
  const int32_t* legacyNeed;  // null: no legacy barrier
  const int32_t* legacyBlockingOps;
  const int32_t* legacyFirst;
  const int32_t* legacyEnd;
  const int32_t* contextOps;
  const int32_t* contextStart;
  // Per call: the recording and the host model.
  const double* callStart;
  const double* callEnd;
  const double* cost;
  const int32_t* outer;
  const uint8_t* waitsOwn;
  const uint8_t* waitKind;
  const int32_t* waitArg;
  const int32_t* waitCtx;
  const int32_t* order;
  const int32_t* callPos;
  const int32_t* handoff;  // null: no handoffs
  // Each thread's calls: threadCalls[threadStart[th] .. threadStart[th + 1]).
  const int32_t* threadCalls;
  const int32_t* threadStart;
  // The GPU's latencies (per device × 4 op kinds; per engine) and duplex factors (per engine); per device, 1 where
  // one engine serves both directions.
  const double* launchLatency;
  const double* dependencyLatency;
  const double* chainLatency;
  const double* engineLatency;
  const double* duplexFactor;
  const uint8_t* sharedEngine;
  // The fix's options (replay-scheduler.ts ReplayOptions), null where absent.
  const double* duration;
  const uint8_t* pinned;
  const uint8_t* freed;
  const double* callDuration;
  const uint8_t* lagUnknown;
  const double* callGap;
  const double* afterLatency;
  // Scratch: resource queue links; done (zeros).
  int32_t* queueNext;
  uint8_t* done;
  // Out: per op its start and end (zeros); per device its busy time.
  double* start;
  double* end;
  double* busy;
};

class Simulation {
 public:
  explicit Simulation(const Inputs& in)
      : in_(in),
        readyMin_(in.start),
        start_(in.start),
        end_(in.end),
        done_(in.done),
        running_(in.devices),
        busyOpen_(in.devices),
        busySum_(in.devices),
        engineBusy_(in.devices * 2),
        engineHead_(in.devices * 2, -1),
        engineTail_(in.devices * 2, -1),
        duplexOp_(in.devices * 2, -1),
        duplexLeft_(in.devices * 2),
        duplexAt_(in.devices * 2),
        duplexSpeed_(in.devices * 2, 1),
        smUsed_(in.devices),
        smRunning_(in.devices),
        smHead_(in.devices, -1),
        smTail_(in.devices, -1),
        contextDone_(in.contextOps, in.contextStart, in.contextStart + 1, in.contexts),
        legacyWaiter_(in.contexts, -1),
        threadPos_(in.threads),
        threadClock_(in.threads),
        threadStarted_(in.threads),
        threadPrevEnd_(in.threads),
        blockedCall_(in.threads, -1),
        blockedSince_(in.threads),
        contextWaiters_(in.contexts),
        handoffWait_(in.threads, -1),
        handoffSkip_(in.threads, -1) {
    if (in.legacyNeed) blockingDone_ = CompletedPrefix(in.legacyBlockingOps, in.legacyFirst, in.legacyEnd, in.contexts);
    if (in.handoff) callEnd_.assign(in.calls, kNaN);
    duplexHeap_.time.resize(16);
    duplexHeap_.code.resize(16);
  }

  // Runs the replay to its end; returns the earliest op issue.
  double run() {
    const size_t n = in_.n;
    // Ops without a call: their earliest start is their recorded start (each
    // set before it is released; no event runs before this loop is done);
    // those that have nothing to wait for go, then every thread.
    for (size_t i = 0; i < n; i++) {
      if (in_.opCall[i] >= 0) continue;
      readyMin_[i] = in_.opStart[i];
      if (readyMin_[i] < firstIssue_) firstIssue_ = readyMin_[i];
      if (in_.pending[i] == 0) release(static_cast<int32_t>(i), -kInf);
    }
    // Threads start at their first call; none runs past a blocking call, so
    // the order in which they start does not matter.
    const int32_t T = static_cast<int32_t>(in_.threads);
    for (int32_t th = 0; th < T; th++) runThread(th);
    for (;;) {
      for (;;) {
        // The smallest (time, code) of the four queues' fronts (from: which queue, -1 none).
        int from = -1;
        double t = 0;
        int32_t code = 0;
        if (heap_.size) {
          t = heap_.time[0];
          code = heap_.code[0];
          from = 0;
        }
        if (readyRun_.leads(t, code, from < 0)) {
          t = readyRun_.time[readyRun_.head];
          code = readyRun_.code[readyRun_.head];
          from = 1;
        }
        if (endRun_.leads(t, code, from < 0)) {
          t = endRun_.time[endRun_.head];
          code = endRun_.code[endRun_.head];
          from = 3;
        }
        if (duplexHeap_.size) {
          const double dt = duplexHeap_.time[0];
          const int32_t dc = duplexHeap_.code[0];
          if (from < 0 || dt < t || (dt == t && dc < code)) {
            t = dt;
            code = dc;
            from = 2;
          }
        }
        if (from < 0) break;
        now_ = t;
        if (from == 2) {
          const bool completed = done_[code];
          if (!completed && end_[code] > t) {
            // A duplex copy whose end moved later since its completion was
            // queued: the top takes the new time in place and moves down.
            duplexHeap_.time[0] = end_[code];
            duplexHeap_.siftTop();
            continue;
          }
          duplexHeap_.pop();
          // Queued before its copy's end moved earlier, which completed it then.
          if (completed) continue;
        } else if (from == 0) {
          heap_.pop();
        } else if (from == 1) {
          readyRun_.head++;
        } else {
          endRun_.head++;
        }
        if (code & kReady) acquire(code & kOpMask, t);
        else if (code & kBegin) begin(code & kOpMask, t);
        else complete(code);
      }
      // Nothing left to happen but a thread still waits: the wait was inferred
      // wrongly or timing changes made threads wait for each other. Let the
      // earliest such thread go on as if its call had not waited.
      int32_t th = -1;
      for (int32_t x = 0; x < T; x++)
        if (blockedCall_[x] >= 0 && (th < 0 || blockedSince_[x] < blockedSince_[th])) th = x;
      if (th < 0) {
        // Or a thread waits for a handoff from a thread that cannot go on:
        // it goes on as if it had not waited.
        for (int32_t x = 0; x < T; x++)
          if (handoffWait_[x] >= 0 && (th < 0 || threadClock_[x] < threadClock_[th])) th = x;
        if (th < 0) break;
        const int32_t j = handoffWait_[th];
        auto it = callWaiters_.find(j);
        removeOne(it->second, th);
        if (it->second.empty()) callWaiters_.erase(it);
        handoffWait_[th] = -1;
        handoffSkip_[th] = in_.threadCalls[in_.threadStart[th] + threadPos_[th]];
        runThread(th);
        continue;
      }
      for (auto it = opWaiters_.begin(); it != opWaiters_.end();) {
        if (removeOne(it->second, th)) {
          waitingOnOps_--;
          if (it->second.empty()) {
            it = opWaiters_.erase(it);
            continue;
          }
        }
        ++it;
      }
      for (auto& waiters : contextWaiters_) removeOne(waiters, th);
      resume(th, blockedSince_[th]);
    }
    return firstIssue_;
  }

  // Per device, its busy time (devices with at least one op running).
  const std::vector<double>& busy() const { return busySum_; }
  // How many ops completed; the earliest start and the latest end among them (kept as each completes: a pass over
  // every op after the run took ~28 ms at 10 M).
  size_t completed() const { return completed_; }
  double gpuStart() const { return gpuStart_; }
  double gpuEnd() const { return gpuEnd_; }

 private:
  static bool removeOne(std::vector<int32_t>& list, int32_t x) {
    for (size_t j = 0; j < list.size(); j++)
      if (list[j] == x) {
        list.erase(list.begin() + static_cast<ptrdiff_t>(j));
        return true;
      }
    return false;
  }

  // --- Durations

  // How long op i runs by itself: the fix's duration, else the recorded one less its duplex slowdown.
  double runTime(int32_t i) const {
    const double o = in_.duration ? in_.duration[i] : kNaN;
    return std::isnan(o) ? in_.work[i] : o;
  }
  // How long call k takes when it does not wait: the fix's time, else its recorded duration (a freed call: its CPU time).
  double callTime(int32_t k) const {
    const double o = in_.callDuration ? in_.callDuration[k] : kNaN;
    if (!std::isnan(o)) return o;
    return in_.freed && in_.freed[k] ? in_.cost[k] : in_.callEnd[k] - in_.callStart[k];
  }
  // What call k still takes after what it waited for completed: its CPU time, unless the fix set the call's time.
  double tailTime(int32_t k) const {
    const double o = in_.callDuration ? in_.callDuration[k] : kNaN;
    return std::isnan(o) ? in_.cost[k] : o;
  }
  // When op x may start after what it depended on ended at t (the GPU's dependency latency).
  double afterDependency(int32_t x, double t) const {
    const double o = in_.afterLatency ? in_.afterLatency[x] : kNaN;
    if (!std::isnan(o)) return t + o;
    return t + in_.dependencyLatency[in_.devOf[x] * 4 + in_.kind[x]];
  }

  // --- An op's way: release → acquire → begin → complete

  // Is legacy-stream op i held by the barrier: blocking work of its context issued before it still running?
  bool heldByBarrier(int32_t i) const {
    return in_.legacyNeed && in_.isLegacyStream[in_.opStream[i]] == 1 && blockingDone_.count(in_.ctxOfOp[i]) < in_.legacyNeed[i];
  }

  // All edges into op i are satisfied (at t, or earlier if t = now): it may start once its earliest start has come.
  void release(int32_t i, double t) {
    if (heldByBarrier(i)) {
      legacyWaiter_[in_.ctxOfOp[i]] = i;
      return;
    }
    const double r = jsMax(t, readyMin_[i]);
    if (r > now_) {
      if (!readyRun_.append(r, i | kReady)) heap_.push(r, i | kReady);
    } else {
      acquire(i, r);
    }
  }

  // One edge into op j is satisfied at t.
  void satisfy(int32_t j, double t) {
    if (--in_.pending[j] == 0) release(j, t);
  }

  // Op i's earliest start has come: it takes its resource and begins, or queues for it.
  void acquire(int32_t i, double t) {
    if (acquireResource(i)) begin(i, t);
  }

  // Op i holds its resource: it runs from t.
  void begin(int32_t i, double t) {
    start_[i] = t;
    const int32_t d = in_.devOf[i];
    if (running_[d]++ == 0) busyOpen_[d] = t;
    const double alone = runTime(i);
    if (beginContended(i, t, alone)) return;
    const double e = t + alone;
    end_[i] = e;
    if (!endRun_.append(e, i)) heap_.push(e, i);
  }

  // Op i's completion event, at now.
  void complete(int32_t i) {
    const double t = now_;
    done_[i] = 1;
    completed_++;
    if (start_[i] < gpuStart_) gpuStart_ = start_[i];
    if (end_[i] > gpuEnd_) gpuEnd_ = end_[i];
    const int32_t d = in_.devOf[i];
    if (--running_[d] == 0) busySum_[d] += t - busyOpen_[d];

    // Its resource goes to whoever is next.
    const int32_t eng = in_.engine[i];
    const int32_t nx = in_.nextInStream[i];
    int32_t chained = -1;
    if (eng >= 0) {
      endContended(i, eng);
      if (nx >= 0 && in_.engine[nx] == eng && in_.pending[nx] == 1 && readyMin_[nx] <= t + in_.chainLatency[eng] && !heldByBarrier(nx)) {
        // The engine goes on with this stream's next copy, waiting for
        // nothing but this one, ahead of other streams' queued copies
        // (replay-host.ts: Latencies.chain). It keeps the engine.
        chained = nx;
        in_.pending[nx] = 0;
        heap_.push(t + in_.chainLatency[eng], nx | kBegin);
      } else {
        const int32_t q = nextCopy(eng);
        if (q >= 0) {
          const double gap = in_.engineLatency[eng];
          if (gap > 0) heap_.push(t + gap, q | kBegin);
          else begin(q, t);
        }
      }
    } else if (in_.kind[i] == kKernel) {
      releaseSms(i, d);
      for (int32_t q = nextKernel(d); q >= 0; q = nextKernel(d)) begin(q, t);
    }

    // Its dependents: the next op of its stream, event waiters, legacy barrier edges.
    if (nx >= 0 && nx != chained) satisfy(nx, afterDependency(nx, t));
    if (in_.edges)
      for (int32_t j = in_.edgeStart[i]; j < in_.edgeStart[i + 1]; j++) {
        const int32_t x = in_.edgeTo[j];
        satisfy(x, afterDependency(x, t));
      }

    // The work of its context completed so far: the legacy-stream op held by
    // the barrier, and threads in a device synchronize, may go on.
    const int32_t c = in_.ctxOfOp[i];
    if (in_.legacyNeed && in_.isBlockingStream[in_.opStream[i]]) {
      const int32_t reached = blockingDone_.advance(c, done_);
      const int32_t l = legacyWaiter_[c];
      if (l >= 0 && reached >= in_.legacyNeed[l]) {
        legacyWaiter_[c] = -1;
        release(l, afterDependency(l, t));
      }
    }
    // (Stepped over only when a thread waits on the context: a device
    // synchronize that asks later steps over what completed meanwhile.)
    // A thread resumed here may join this list again: it is read by index.
    if (!contextWaiters_[c].empty()) {
      const int32_t reached = contextDone_.advance(c, done_);
      for (size_t j = 0; j < contextWaiters_[c].size();) {
        const int32_t th = contextWaiters_[c][j];
        if (reached >= in_.waitArg[blockedCall_[th]]) {
          contextWaiters_[c].erase(contextWaiters_[c].begin() + static_cast<ptrdiff_t>(j));
          resume(th, t);
        } else {
          j++;
        }
      }
    }
    // Threads in a stream or event synchronize, or a blocking copy, waiting for this op.
    if (waitingOnOps_) {
      auto it = opWaiters_.find(i);
      if (it != opWaiters_.end()) {
        std::vector<int32_t> list = std::move(it->second);
        opWaiters_.erase(it);
        waitingOnOps_ -= static_cast<int64_t>(list.size());
        for (const int32_t th : list) resume(th, t);
      }
    }
  }

  // --- Resources (replay-resources.ts says what they model)

  // Op i asks to run: it takes its engine or its share of the SMs (ops that need neither always do), or joins the queue.
  bool acquireResource(int32_t i) {
    const int32_t eng = in_.engine[i];
    if (eng >= 0) {
      if (!engineBusy_[eng]) {
        engineBusy_[eng] = 1;
        return true;
      }
      enqueue(i, engineHead_[eng], engineTail_[eng]);
      return false;
    }
    if (in_.kind[i] == kKernel && in_.share[i] != kNoShare) {
      const int32_t d = in_.devOf[i];
      const double share = in_.share[i];
      if (smHead_[d] < 0 && (smRunning_[d] == 0 || smUsed_[d] + share <= 1 + kShareSlack)) {
        smUsed_[d] += share;
        smRunning_[d]++;
        return true;
      }
      enqueue(i, smHead_[d], smTail_[d]);
      return false;
    }
    return true;
  }

  void enqueue(int32_t i, int32_t& head, int32_t& tail) {
    in_.queueNext[i] = -1;
    if (tail >= 0) in_.queueNext[tail] = i;
    else head = i;
    tail = i;
  }

  // Engine `eng` is done with its copy: the next copy queued for it, which now holds it, or -1 (the engine is idle).
  int32_t nextCopy(int32_t eng) {
    const int32_t q = engineHead_[eng];
    if (q < 0) {
      engineBusy_[eng] = 0;
      return -1;
    }
    engineHead_[eng] = in_.queueNext[q];
    if (engineHead_[eng] < 0) engineTail_[eng] = -1;
    return q;
  }

  // Kernel i has completed: its share of device d's SMs is free.
  void releaseSms(int32_t i, int32_t d) {
    if (in_.share[i] == kNoShare) return;
    smUsed_[d] -= in_.share[i];
    smRunning_[d]--;
    if (smRunning_[d] == 0) smUsed_[d] = 0;  // no drift
  }

  // The kernel at the head of device d's queue if it now fits, taking its share; else -1.
  int32_t nextKernel(int32_t d) {
    const int32_t q = smHead_[d];
    if (q < 0) return -1;
    const double share = in_.share[q];
    if (smRunning_[d] > 0 && smUsed_[d] + share > 1 + kShareSlack) return -1;
    smHead_[d] = in_.queueNext[q];
    if (smHead_[d] < 0) smTail_[d] = -1;
    smUsed_[d] += share;
    smRunning_[d]++;
    return q;
  }

  // Op i begins at t and would take `alone` ns by itself. A pinned copy on a
  // device with an engine per direction shares the link with the other
  // direction's copy: its end is set and queued here, and moves as that copy
  // comes and goes (true). Every other op runs at full speed (false).
  bool beginContended(int32_t i, double t, double alone) {
    const int32_t eng = in_.engine[i];
    if (eng < 0 || in_.sharedEngine[in_.devOf[i]] || !(in_.duplex[i] == 1 || (in_.pinned && in_.pinned[i] == 1))) return false;
    const int32_t other = eng ^ 1;
    const bool both = duplexOp_[other] >= 0;
    duplexOp_[eng] = i;
    duplexLeft_[eng] = alone;
    duplexAt_[eng] = t;
    duplexSpeed_[eng] = 1;
    end_[i] = -kInf;  // nothing queued for it yet: progress() queues it
    if (both) progress(other, true, t);
    progress(eng, both, t);
    return true;
  }

  // Copy i, on engine `eng`, has completed now: the other direction's copy, if any, goes on at full speed.
  void endContended(int32_t i, int32_t eng) {
    if (duplexOp_[eng] != i) return;
    duplexOp_[eng] = -1;
    if (duplexOp_[eng ^ 1] >= 0) progress(eng ^ 1, false, now_);
  }

  // Brings engine e's copy up to t at its old speed, then lets it go on at
  // full speed or its direction's duplex factor (contended): its end moves.
  void progress(int32_t e, bool contended, double t) {
    const double speed = contended ? in_.duplexFactor[e] : 1;
    const int32_t i = duplexOp_[e];
    duplexLeft_[e] -= (t - duplexAt_[e]) * duplexSpeed_[e];
    if (duplexLeft_[e] < 0) duplexLeft_[e] = 0;
    duplexAt_[e] = t;
    duplexSpeed_[e] = speed;
    const double moved = t + duplexLeft_[e] / speed;
    // Later than planned: the completion already queued finds that its op's
    // end moved and takes the new time (run()); earlier: queue it now.
    const double queued = end_[i];
    end_[i] = moved;
    if (moved < queued || !(queued > t)) duplexHeap_.push(moved, i);
  }

  // --- Host threads

  // Thread th makes its calls from where it stopped, issuing their ops, until
  // a call waits for something not yet done (it blocks: a completion resumes
  // it) or its calls run out. A thread woken by another's handoff runs once
  // that one has stopped (its state written back), not inside it.
  void runThread(int32_t th) {
    if (inThread_) {
      wake_.push_back(th);
      return;
    }
    inThread_ = true;
    runCalls(th);
    while (!wake_.empty()) {
      const int32_t next = wake_.back();
      wake_.pop_back();
      runCalls(next);
    }
    inThread_ = false;
  }

  void runCalls(int32_t th) {
    const Inputs& in = in_;
    const int32_t* calls = in.threadCalls + in.threadStart[th];
    const int32_t count = in.threadStart[th + 1] - in.threadStart[th];
    const size_t n = in.n;
    int32_t pos = threadPos_[th];
    double clock = threadClock_[th];
    double prevEnd = threadPrevEnd_[th];
    bool started = threadStarted_[th];
    while (pos < count) {
      const int32_t call = calls[pos];
      if (in.outer[call] != call) {  // issued with its outer call below
        pos++;
        continue;
      }
      // It starts after the host time that preceded it in the recording.
      const double recordedStart = in.callStart[call];
      const double gap = in.callGap && !std::isnan(in.callGap[call]) ? in.callGap[call] : jsMax(0, recordedStart - prevEnd);
      double startAt = started ? clock + gap : recordedStart;
      const int32_t from = in.handoff && handoffSkip_[th] != call ? in.handoff[call] : -1;
      if (from >= 0) {
        // Handed over by another thread: it starts as long after that
        // thread's call ends as it did in the recording, its own idle time
        // before it being that wait.
        const double e = callEnd_[from];
        if (std::isnan(e)) {
          callWaiters_[from].push_back(th);
          handoffWait_[th] = from;
          break;
        }
        startAt = jsMax(started ? clock : -kInf, e + (recordedStart - in.callEnd[from]));
      }
      started = true;
      prevEnd = in.callEnd[call];
      const double duration = callTime(call);
      // Issue its ops and those of the calls nested in it, each at its
      // recorded offset into the call (within the call's replayed time).
      for (int32_t j = pos; j < count; j++) {
        const int32_t part = calls[j];
        if (j > pos && in.outer[part] != call) break;
        const double partStart = in.callStart[part];
        const double issueAt = startAt + jsMin(jsMax(0, partStart - recordedStart), duration);
        const bool waitsForOwn = in.waitsOwn[part] && !(in.freed && in.freed[part]);
        // Its ops follow each other in the issue order from callPos (the host
        // model emits them together): read up to the first of another call.
        for (size_t p = static_cast<size_t>(in.callPos[part]); p < n; p++) {
          const int32_t i = in.order[p];
          if (in.opCall[i] != part) break;
          if (issueAt < firstIssue_) firstIssue_ = issueAt;
          // Launch lag: the op's own recorded lag where it did not wait for
          // anything else (its call blocked until it was done); else the
          // device's launch latency after the call returns, or its own lag
          // if shorter.
          const double ownLag = in.lagUnknown && in.lagUnknown[i] ? kInf : in.opStart[i] - partStart;
          const double estimate = (part == call ? duration : 0) + in.launchLatency[in.devOf[i] * 4 + in.kind[i]];
          const double lag = waitsForOwn && ownLag != kInf ? ownLag : jsMin(ownLag, estimate);
          readyMin_[i] = issueAt + (lag > 0 ? lag : 0);
          if (--in.pending[i] == 0) release(i, issueAt);
        }
      }
      pos++;
      // Does the call wait, and for what (replay-host.ts)?
      const uint8_t kind = in.freed && in.freed[call] ? kWaitNone : in.waitKind[call];
      if (kind == kWaitNone) {
        clock = startAt + duration;
        if (in.handoff) ended(call, clock);
        continue;
      }
      const double tail = tailTime(call);
      if (kind == kWaitOp) {
        const int32_t target = in.waitArg[call];
        if (done_[target]) {
          clock = jsMax(startAt, end_[target]) + tail;
          if (in.handoff) ended(call, clock);
          continue;
        }
        opWaiters_[target].push_back(th);
        waitingOnOps_++;
      } else {
        const int32_t c = in.waitCtx[call];
        if (contextDone_.advance(c, done_) >= in.waitArg[call]) {
          clock = startAt + tail;
          if (in.handoff) ended(call, clock);
          continue;
        }
        contextWaiters_[c].push_back(th);
      }
      blockedSince_[th] = startAt;
      blockedCall_[th] = call;
      break;
    }
    threadPos_[th] = pos;
    threadClock_[th] = clock;
    threadPrevEnd_[th] = prevEnd;
    threadStarted_[th] = started;
  }

  // What blocked thread th waited for completed at t: its call returns after its tail, and the thread goes on.
  void resume(int32_t th, double t) {
    const int32_t k = blockedCall_[th];
    threadClock_[th] = jsMax(blockedSince_[th], t) + tailTime(k);
    blockedCall_[th] = -1;
    if (in_.handoff) ended(k, threadClock_[th]);
    runThread(th);
  }

  // Call k's replayed end is t: the threads it hands over to may go on.
  void ended(int32_t k, double t) {
    callEnd_[k] = t;
    auto it = callWaiters_.find(k);
    if (it == callWaiters_.end()) return;
    std::vector<int32_t> waiting = std::move(it->second);
    callWaiters_.erase(it);
    for (const int32_t th : waiting) {
      handoffWait_[th] = -1;
      runThread(th);
    }
  }

  const Inputs& in_;
  // Earliest start of an op not yet begun: kept in `start` itself, written over when it begins.
  double* readyMin_;
  double* start_;
  double* end_;
  uint8_t* done_;
  double now_ = -kInf;
  double firstIssue_ = kInf;
  size_t completed_ = 0;
  double gpuStart_ = kInf, gpuEnd_ = -kInf;

  EventHeap heap_;
  // The duplex copies' completions (their ends move while they run): a heap of their own, a few entries deep.
  EventHeap duplexHeap_;
  EventRun readyRun_;
  EventRun endRun_;

  // Per dense device: ops running, since when, busy time so far.
  std::vector<int32_t> running_;
  std::vector<double> busyOpen_;
  std::vector<double> busySum_;

  // Per engine (device × 2 + direction): held, its queue; the duplex copy on it, its work left at full speed, when
  // that was brought up to date, its speed.
  std::vector<uint8_t> engineBusy_;
  std::vector<int32_t> engineHead_, engineTail_;
  std::vector<int32_t> duplexOp_;
  std::vector<double> duplexLeft_, duplexAt_, duplexSpeed_;
  // Per device: the SM shares running, how many, and the queue.
  std::vector<double> smUsed_;
  std::vector<int32_t> smRunning_;
  std::vector<int32_t> smHead_, smTail_;

  // Per context: its work completed in issue order (all of it; its blocking-stream ops), the legacy op held.
  CompletedPrefix contextDone_;
  CompletedPrefix blockingDone_;
  std::vector<int32_t> legacyWaiter_;

  // Per host thread: next call, clock, started, the recorded end of its previous outer call, the call it is blocked
  // in (-1: running) and since when.
  std::vector<int32_t> threadPos_;
  std::vector<double> threadClock_;
  std::vector<uint8_t> threadStarted_;
  std::vector<double> threadPrevEnd_;
  std::vector<int32_t> blockedCall_;
  std::vector<double> blockedSince_;
  // Threads blocked on one op (by op), how many in all; on a prefix of a context's work (by context).
  std::unordered_map<int32_t, std::vector<int32_t>> opWaiters_;
  int64_t waitingOnOps_ = 0;
  std::vector<std::vector<int32_t>> contextWaiters_;
  // Handoffs: each outer call's replayed end (NaN until then); per thread the call it waits to end and the call whose
  // handoff it goes past (the deadlock fallback); threads waiting by call; threads to run once the running one stops.
  std::vector<double> callEnd_;
  std::vector<int32_t> handoffWait_, handoffSkip_;
  std::unordered_map<int32_t, std::vector<int32_t>> callWaiters_;
  std::vector<int32_t> wake_;
  bool inThread_ = false;
};

}  // namespace

// replaySchedule(inputs) → {firstIssue, gpuStart, gpuEnd}: the replay of
// replay.ts's inputs (the names of Inputs above), start, end and busy
// written in place; an op that never began gets start 0.
Napi::Value replayScheduleBinding(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const char* what = "replaySchedule";
  const Napi::Object o = inputsOf(info, what);
  Inputs in;
  in.n = count(o, what, "ops");
  in.calls = count(o, what, "calls");
  in.devices = count(o, what, "devices");
  in.contexts = count(o, what, "contexts");
  in.threads = count(o, what, "threads");
  const size_t n = in.n, nc = in.calls, D = in.devices, C = in.contexts;
  in.kind = typedArrayOf<uint8_t>(o, what, "kind", n);
  in.opStart = typedArrayOf<double>(o, what, "opStart", n);
  in.devOf = typedArrayOf<int32_t>(o, what, "devOf", n);
  in.ctxOfOp = typedArrayOf<int32_t>(o, what, "ctxOfOp", n);
  in.opCall = typedArrayOf<int32_t>(o, what, "opCall", n);
  in.work = typedArrayOf<double>(o, what, "work", n);
  in.engine = typedArrayOf<int32_t>(o, what, "engine", n);
  in.share = typedArrayOf<float>(o, what, "share", n);
  in.duplex = typedArrayOf<uint8_t>(o, what, "duplex", n);
  in.pending = typedArrayOf<int32_t>(o, what, "pending", n);
  in.nextInStream = typedArrayOf<int32_t>(o, what, "nextInStream", n);
  in.opStream = typedArrayOf<int32_t>(o, what, "opStream", n);
  size_t streams = 0;
  in.isLegacyStream = typedArray<uint8_t>(o, what, "isLegacyStream", streams);
  in.isBlockingStream = typedArrayOf<uint8_t>(o, what, "isBlockingStream", streams);
  in.edgeTo = typedArray<int32_t>(o, what, "edgeTo", in.edges);
  in.edgeStart = typedArrayOf<int32_t>(o, what, "edgeStart", in.edges ? n + 1 : 0);
  in.legacyNeed = typedArrayOf<int32_t>(o, what, "legacyNeed", n, true);
  size_t blocking = 0;
  in.legacyBlockingOps = typedArray<int32_t>(o, what, "legacyBlockingOps", blocking, !in.legacyNeed);
  in.legacyFirst = typedArrayOf<int32_t>(o, what, "legacyFirst", C, !in.legacyNeed);
  in.legacyEnd = typedArrayOf<int32_t>(o, what, "legacyEnd", C, !in.legacyNeed);
  in.contextOps = typedArrayOf<int32_t>(o, what, "contextOps", n);
  in.contextStart = typedArrayOf<int32_t>(o, what, "contextStart", C + 1);
  in.callStart = typedArrayOf<double>(o, what, "callStart", nc);
  in.callEnd = typedArrayOf<double>(o, what, "callEnd", nc);
  in.cost = typedArrayOf<double>(o, what, "cost", nc);
  in.outer = typedArrayOf<int32_t>(o, what, "outer", nc);
  in.waitsOwn = typedArrayOf<uint8_t>(o, what, "waitsOwn", nc);
  in.waitKind = typedArrayOf<uint8_t>(o, what, "waitKind", nc);
  in.waitArg = typedArrayOf<int32_t>(o, what, "waitArg", nc);
  in.waitCtx = typedArrayOf<int32_t>(o, what, "waitCtx", nc);
  in.order = typedArrayOf<int32_t>(o, what, "order", n);
  in.callPos = typedArrayOf<int32_t>(o, what, "callPos", nc);
  in.handoff = typedArrayOf<int32_t>(o, what, "handoff", nc, true);
  in.threadStart = typedArrayOf<int32_t>(o, what, "threadStart", in.threads + 1);
  in.threadCalls = typedArrayOf<int32_t>(o, what, "threadCalls", static_cast<size_t>(in.threadStart[in.threads]));
  in.launchLatency = typedArrayOf<double>(o, what, "launchLatency", D * 4);
  in.dependencyLatency = typedArrayOf<double>(o, what, "dependencyLatency", D * 4);
  in.chainLatency = typedArrayOf<double>(o, what, "chainLatency", D * 2);
  in.engineLatency = typedArrayOf<double>(o, what, "engineLatency", D * 2);
  in.duplexFactor = typedArrayOf<double>(o, what, "duplexFactor", D * 2);
  in.sharedEngine = typedArrayOf<uint8_t>(o, what, "sharedEngine", D);
  in.duration = typedArrayOf<double>(o, what, "duration", n, true);
  in.pinned = typedArrayOf<uint8_t>(o, what, "pinned", n, true);
  in.freed = typedArrayOf<uint8_t>(o, what, "freed", nc, true);
  in.callDuration = typedArrayOf<double>(o, what, "callDuration", nc, true);
  in.lagUnknown = typedArrayOf<uint8_t>(o, what, "lagUnknown", n, true);
  in.callGap = typedArrayOf<double>(o, what, "callGap", nc, true);
  in.afterLatency = typedArrayOf<double>(o, what, "afterLatency", n, true);
  in.queueNext = typedArrayOf<int32_t>(o, what, "queueNext", n);
  in.done = typedArrayOf<uint8_t>(o, what, "done", n);
  in.start = typedArrayOf<double>(o, what, "start", n);
  in.end = typedArrayOf<double>(o, what, "end", n);
  in.busy = typedArrayOf<double>(o, what, "busy", D);

  // The indexes the simulation follows, each within what it indexes; an op's kind picks its latencies (4 a device);
  // an event's code holds its op below kBegin.
  const int64_t N = static_cast<int64_t>(n), NC = static_cast<int64_t>(nc);
  if (N >= kBegin) throw Napi::RangeError::New(env, "replaySchedule: more operations than one replay takes (2^29)");
  for (size_t i = 0; i < n; i++)
    if (in.kind[i] > 3) throw Napi::RangeError::New(env, "replaySchedule: kind[" + std::to_string(i) + "] is not an operation's kind");
  checkIndexes(env, what, "devOf", in.devOf, n, 0, static_cast<int64_t>(D));
  checkIndexes(env, what, "ctxOfOp", in.ctxOfOp, n, 0, static_cast<int64_t>(C));
  checkIndexes(env, what, "opCall", in.opCall, n, -1, NC);
  checkIndexes(env, what, "engine", in.engine, n, -1, static_cast<int64_t>(2 * D));
  checkIndexes(env, what, "nextInStream", in.nextInStream, n, -1, N);
  checkIndexes(env, what, "opStream", in.opStream, n, 0, static_cast<int64_t>(streams));
  checkIndexes(env, what, "order", in.order, n, 0, N);
  checkIndexes(env, what, "contextOps", in.contextOps, n, 0, N);
  checkIndexes(env, what, "contextStart", in.contextStart, C + 1, 0, N + 1);
  checkIndexes(env, what, "edgeTo", in.edgeTo, in.edges, 0, N);
  if (in.edges) checkIndexes(env, what, "edgeStart", in.edgeStart, n + 1, 0, static_cast<int64_t>(in.edges) + 1);
  checkIndexes(env, what, "outer", in.outer, nc, 0, NC);
  checkIndexes(env, what, "callPos", in.callPos, nc, 0, N + 1);
  checkIndexes(env, what, "threadStart", in.threadStart, in.threads + 1, 0, static_cast<int64_t>(in.threadStart[in.threads]) + 1);
  checkIndexes(env, what, "threadCalls", in.threadCalls, static_cast<size_t>(in.threadStart[in.threads]), 0, NC);
  if (in.handoff) checkIndexes(env, what, "handoff", in.handoff, nc, -1, NC);
  for (size_t k = 0; k < nc; k++) {
    // A call's wait: for an op, for a prefix of a context's ops (waitArg their count, waitCtx the context).
    if (in.waitKind[k] == kWaitOp) checkIndex(env, what, "waitArg", k, in.waitArg[k], 0, N);
    else if (in.waitKind[k] != kWaitNone) checkIndex(env, what, "waitCtx", k, in.waitCtx[k], 0, static_cast<int64_t>(C));
  }
  if (in.legacyNeed) {
    checkIndexes(env, what, "legacyBlockingOps", in.legacyBlockingOps, blocking, 0, N);
    checkIndexes(env, what, "legacyFirst", in.legacyFirst, C, 0, static_cast<int64_t>(blocking) + 1);
    checkIndexes(env, what, "legacyEnd", in.legacyEnd, C, 0, static_cast<int64_t>(blocking) + 1);
  }

  Simulation simulation(in);
  const double firstIssue = simulation.run();
  for (size_t d = 0; d < D; d++) in.busy[d] = simulation.busy()[d];
  double gs = simulation.gpuStart(), ge = simulation.gpuEnd();
  if (simulation.completed() < n) {
    gs = kInf;
    ge = -kInf;
    for (size_t i = 0; i < n; i++) {
      // An op that never began (its dependencies never met) holds its earliest start: 0, as an op never written.
      if (!in.done[i]) in.start[i] = 0;
      if (in.start[i] < gs) gs = in.start[i];
      if (in.end[i] > ge) ge = in.end[i];
    }
  }
  Napi::Object result = Napi::Object::New(env);
  result.Set("firstIssue", firstIssue);
  result.Set("gpuStart", gs);
  result.Set("gpuEnd", ge);
  return result;
}

}  // namespace streamscope::addon
