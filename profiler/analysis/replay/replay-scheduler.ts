// The what-if replay's scheduler (replay.ts): the discrete-event simulation
// itself, over one state (Simulation). Host threads make their calls in
// order and issue the calls' ops; an op whose dependencies are met
// (replay-graph.ts) waits out its launch latency, takes its resource or
// queues for it (replay-resources.ts), runs, and on completion releases its
// dependents, hands its resource over, and wakes the host threads that
// waited for it. Events (replay-events.ts) are processed in time order.
//
// An op's way through it:
//   pending edges → 0: release   (the legacy barrier may hold it: legacyWaiter)
//   its earliest start: acquire  (READY event; the resource may queue it)
//   resource held: begin         (BEGIN event after an engine handoff)
//   its end: complete            (the completion event)
import type { Ns } from '../../contract/time.ts';
import type { Host } from '../host.ts';
import { BEGIN, EventHeap, EventRun, OP_MASK, READY } from './replay-events.ts';
import { CompletedPrefix, type DependencyGraph, type IssueIndex, type LegacyBarrier } from './replay-graph.ts';
import { WaitKind, type HostModel } from './replay-host.ts';
import { Resources } from './replay-resources.ts';
import { OpKind, type Trace } from '../trace.ts';

// ---------------------------------------------------------------------------
// Options and result

export interface ReplayOptions {
  /** Per op: duration (ns) had it run alone (no duplex contention); NaN or absent: as recorded. */
  duration?: Float64Array;
  /** Per op: 1 = a copy that now uses pinned host memory (takes part in duplex contention). */
  pinned?: Uint8Array;
  /** Per op: stream (streams.id, or an id of a stream a fix created). Default: as recorded. */
  stream?: Int32Array;
  /** streams.flags of streams not in the recording's table (fresh ones), or overrides. */
  streamFlags?: Map<number, number>;
  /** Per op: 1 = its recorded launch lag no longer applies (e.g. a pageable copy's staging delay). */
  lagUnknown?: Uint8Array;
  /** Per call: 1 = the call no longer waits for anything (it returns after its CPU time). */
  freed?: Uint8Array;
  /** Per call: CPU time (ns) to use instead of the recorded one; NaN = unchanged. */
  callDuration?: Float64Array;
  /** Per op: the ops it waits for instead of its recorded event waits (replay-graph.ts: StreamChanges). */
  waitFor?: ReadonlyMap<number, readonly number[]>;
  /** Per call: the host time before it (after its thread's previous call) instead of the recorded one; NaN = unchanged. */
  callGap?: Float64Array;
  /** Per op: the GPU's latency after what it depended on (its stream's previous op) instead of the measured one; NaN = unchanged. */
  afterLatency?: Float64Array;
}

export interface ReplayResult {
  /** Per op: simulated start and end (ns, the recording's time base). */
  start: Float64Array;
  end: Float64Array;
  /** First op issue (its call's start) → last op end. */
  makespanNs: Ns;
  /** First op start → last op end. */
  gpuSpanNs: Ns;
  gpuStart: Ns;
  gpuEnd: Ns;
  firstIssue: Ns;
  /** devices.id → time with at least one op running (ns). */
  busy: Map<number, Ns>;
}

// Enum values as module constants: the hot loops read them per op, and a test
// runner that rewrites imports into property reads (vitest) made each read a
// lookup on the imported module's namespace.
const KERNEL = OpKind.Kernel;
const WAIT_NONE = WaitKind.None;
const WAIT_OP = WaitKind.Op;

/** Per-op arrays the scheduler works in, kept between replays by the caller (replay.ts): queueNext of any content, done filled with 0. */
export interface SchedulerScratch {
  queueNext: Int32Array;
  done: Uint8Array;
}

/**
 * One replay's whole state, and the steps that change it. Built, run once
 * (run()), dropped.
 */
export class Simulation {
  // --- Inputs: the recording, its host model, the fix.
  private readonly host: Host;
  private readonly model: HostModel;
  private readonly opKind: Uint8Array;
  /** Recorded op starts (an op's own launch lag). */
  private readonly opStart: Float64Array;
  private readonly devOf: Int32Array;
  private readonly ctxOfOp: Int32Array;
  /** The GPU's latencies (replay-host.ts: Latencies): launch and dependency per device × op kind; engine handoff and chain per engine. */
  private readonly launchLatency: Float64Array;
  private readonly dependencyLatency: Float64Array;
  private readonly chainLatency: Float64Array;
  private readonly engineLatency: Float64Array;
  /** ReplayOptions, null where absent. */
  private readonly duration: Float64Array | null;
  private readonly freed: Uint8Array | null;
  private readonly callDuration: Float64Array | null;
  private readonly lagUnknown: Uint8Array | null;
  private readonly callGap: Float64Array | null;
  private readonly afterLatency: Float64Array | null;

  // --- The dependency graph and the resources.
  private readonly graph: DependencyGraph;
  private readonly pending: Int32Array;
  private readonly nextInStream: Int32Array;
  private readonly opStream: Int32Array;
  private readonly isLegacyStream: Uint8Array;
  private readonly isBlockingStream: Uint8Array;
  private readonly legacy: LegacyBarrier | null;
  private readonly resources: Resources;

  // --- Time.
  private readonly heap = new EventHeap();
  /**
   * The duplex copies' completions (replay-resources.ts: their ends move
   * while they run, and each move may queue one again): a heap of their
   * own, a few entries deep, beside the main one of every other event
   * (dozens to thousands). Half the events, each a few levels of sifting
   * less. The two are popped as one: the smaller (time, code) first.
   */
  private readonly duplexHeap = new EventHeap(16);
  /**
   * [0]: now, the time of the event being processed (-Infinity before the
   * first), read by the resources too; [1]: theirs (replay-resources.ts:
   * Resources.clock).
   */
  private readonly clock = Float64Array.of(-Infinity, 0);
  /**
   * Beside the main heap, the events that come in order: READY events (a
   * thread issues its ops in time order) and completions of ops that run
   * at full speed (they mostly begin in time order and take alike).
   */
  private readonly readyRun = new EventRun();
  private readonly endRun = new EventRun();

  // --- Per op.
  /** Simulated start and end (the result). A duplex copy's end moves while it runs. */
  readonly start: Float64Array;
  readonly end: Float64Array;
  /**
   * Earliest start: its launch latency after its call is issued; ops
   * without a call, their recorded start. Kept in `start` itself: it is
   * read only until the op begins, when its start is written over it (one
   * array of 80 MB per 10 M ops less); result() clears it where an op never
   * began.
   */
  private readonly readyMin: Float64Array;
  private readonly done: Uint8Array;

  // --- Per dense device: ops running, since when, busy time so far.
  private readonly running: Int32Array;
  private readonly busyOpen: Float64Array;
  private readonly busySum: Float64Array;

  // --- Per context: how much of its work has completed in issue order.
  /** All its ops: what a device synchronize waits for. */
  private readonly contextDone: CompletedPrefix;
  /** Its blocking-stream ops: what a legacy-stream op waits for (null without legacy work). */
  private readonly blockingDone: CompletedPrefix | null;
  /** The legacy-stream op held by the barrier, -1 for none. */
  private readonly legacyWaiter: Int32Array;

  // --- Host threads (index into model.threadCalls).
  /** Next position in its call list; its clock (when its next call may start); 1 once it made a call. */
  private readonly threadPos: Int32Array;
  private readonly threadClock: Float64Array;
  private readonly threadStarted: Uint8Array;
  /** Recorded end of its previous outer call: the host time between two calls is kept. */
  private readonly threadPrevEnd: Float64Array;
  /** The call it is blocked in (-1: running) and when that call started. */
  private readonly blockedCall: Int32Array;
  private readonly blockedSince: Float64Array;
  /** Threads blocked on one op (stream, event sync, blocking copy), by op; how many in all. */
  private readonly opWaiters = new Map<number, number[]>();
  private waitingOnOps = 0;
  /** Threads blocked on a prefix of a context's work (device sync), by context. */
  private readonly contextWaiters: number[][];
  /**
   * Handoffs between threads (replay-host.ts: inferHandoffs), where the
   * recording has any: each outer call's replayed end (NaN until then);
   * per thread the call of another thread it waits to end (-1: none), and
   * a call whose handoff it goes past without waiting (the deadlock
   * fallback in run()); threads waiting, by the call they wait for; threads
   * to run again once the thread running now has stopped.
   */
  private readonly callEnd: Float64Array | null;
  private readonly handoffWait: Int32Array;
  private readonly handoffSkip: Int32Array;
  private readonly callWaiters = new Map<number, number[]>();
  private readonly wake: number[] = [];
  private running_ = false;
  /** The earliest op issue. */
  private firstIssue = Infinity;

  constructor(trace: Trace, host: Host, model: HostModel, index: IssueIndex, graph: DependencyGraph, options: ReplayOptions, scratch: SchedulerScratch) {
    const n = trace.ops.length;
    const C = model.contexts;
    const T = model.threadCalls.length;
    const D = model.devIndex.size;
    this.host = host;
    this.model = model;
    this.opKind = trace.ops.kind;
    this.opStart = trace.ops.start;
    this.devOf = model.devOf;
    this.ctxOfOp = model.ctxOfOp;
    this.launchLatency = model.latency.launch;
    this.dependencyLatency = model.latency.dependency;
    this.chainLatency = model.latency.chain;
    this.engineLatency = model.latency.engine;
    this.duration = options.duration ?? null;
    this.freed = options.freed ?? null;
    this.callDuration = options.callDuration ?? null;
    this.lagUnknown = options.lagUnknown ?? null;
    this.callGap = options.callGap ?? null;
    this.afterLatency = options.afterLatency ?? null;

    this.graph = graph;
    this.pending = graph.pending;
    this.nextInStream = graph.nextInStream;
    this.opStream = graph.opStream;
    this.isLegacyStream = graph.isLegacyStream;
    this.isBlockingStream = graph.isBlockingStream;
    this.legacy = graph.legacy;

    this.start = new Float64Array(n);
    this.end = new Float64Array(n);
    this.readyMin = this.start;
    this.done = scratch.done;
    this.resources = new Resources(trace, model, options.pinned ?? null, scratch.queueNext, this.end, this.duplexHeap, this.clock);

    this.running = new Int32Array(D);
    this.busyOpen = new Float64Array(D);
    this.busySum = new Float64Array(D);

    this.contextDone = new CompletedPrefix(index.contextOps, index.contextStart.slice(0, C), index.contextStart.subarray(1));
    this.blockingDone = graph.legacy ? new CompletedPrefix(graph.legacy.blockingOps, graph.legacy.first, graph.legacy.end) : null;
    this.legacyWaiter = new Int32Array(C).fill(-1);

    this.threadPos = new Int32Array(T);
    this.threadClock = new Float64Array(T);
    this.threadStarted = new Uint8Array(T);
    this.threadPrevEnd = new Float64Array(T);
    this.blockedSince = new Float64Array(T);
    this.blockedCall = new Int32Array(T).fill(-1);
    this.contextWaiters = Array.from({ length: C }, () => []);
    this.callEnd = model.handoffs ? new Float64Array(host.calls.length).fill(NaN) : null;
    this.handoffWait = new Int32Array(T).fill(-1);
    this.handoffSkip = new Int32Array(T).fill(-1);
  }

  /** Runs the replay to its end: every op's start and end, and the spans. */
  run(): ReplayResult {
    const n = this.start.length;
    const opCall = this.host.opCall;
    const T = this.threadPos.length;
    // Ops without a call: their earliest start is their recorded start (each
    // set before it is released; no event runs before this loop is done);
    // those that have nothing to wait for go, then every thread.
    for (let i = 0; i < n; i++) {
      if (opCall[i]! >= 0) continue;
      this.readyMin[i] = this.opStart[i]!;
      if (this.readyMin[i]! < this.firstIssue) this.firstIssue = this.readyMin[i]!;
      if (this.pending[i] === 0) this.release(i, -Infinity);
    }
    // Threads start at their first call; none runs past a blocking call, so
    // the order in which they start does not matter.
    for (let th = 0; th < T; th++) this.runThread(th);
    const heap = this.heap;
    const duplexHeap = this.duplexHeap;
    const run = this.readyRun;
    const endRun = this.endRun;
    for (;;) {
      for (;;) {
        // The smallest (time, code) of the three queues' fronts (from: which queue, -1 none).
        let from = -1;
        let t = 0;
        let code = 0;
        if (heap.size) {
          t = heap.time[0]!;
          code = heap.code[0]!;
          from = 0;
        }
        if (run.leads(t, code, from < 0)) {
          t = run.time[run.head]!;
          code = run.code[run.head]!;
          from = 1;
        }
        if (endRun.leads(t, code, from < 0)) {
          t = endRun.time[endRun.head]!;
          code = endRun.code[endRun.head]!;
          from = 3;
        }
        if (duplexHeap.size) {
          const dt = duplexHeap.time[0]!;
          const dc = duplexHeap.code[0]!;
          if (from < 0 || dt < t || (dt === t && dc < code)) {
            t = dt;
            code = dc;
            from = 2;
          }
        }
        if (from < 0) break;
        this.clock[0] = t;
        if (from === 2) {
          const completed = this.done[code];
          if (!completed && this.end[code]! > t) {
            // A duplex copy whose end moved later since its completion was
            // queued: the top takes the new time in place and moves down (one
            // sift, not a pop and a push).
            duplexHeap.time[0] = this.end[code]!;
            duplexHeap.siftTop();
            continue;
          }
          duplexHeap.pop();
          // Queued before its copy's end moved earlier, which completed it then.
          if (completed) continue;
        } else if (from === 0) heap.pop();
        else if (from === 1) run.head++;
        else endRun.head++;
        if (code & READY) this.acquire(code & OP_MASK, t);
        else if (code & BEGIN) this.begin(code & OP_MASK, t);
        else this.complete(code);
      }
      // Nothing left to happen but a thread still waits: the wait was inferred
      // wrongly or timing changes made threads wait for each other. Let the
      // earliest such thread go on as if its call had not waited.
      let th = -1;
      for (let x = 0; x < T; x++) if (this.blockedCall[x]! >= 0 && (th < 0 || this.blockedSince[x]! < this.blockedSince[th]!)) th = x;
      if (th < 0) {
        // Or a thread waits for a handoff from a thread that cannot go on:
        // it goes on as if it had not waited.
        for (let x = 0; x < T; x++) if (this.handoffWait[x]! >= 0 && (th < 0 || this.threadClock[x]! < this.threadClock[th]!)) th = x;
        if (th < 0) break;
        const j = this.handoffWait[th]!;
        const list = this.callWaiters.get(j)!;
        list.splice(list.indexOf(th), 1);
        if (!list.length) this.callWaiters.delete(j);
        this.handoffWait[th] = -1;
        this.handoffSkip[th] = this.model.threadCalls[th]![this.threadPos[th]!]!;
        this.runThread(th);
        continue;
      }
      for (const [op, list] of this.opWaiters) {
        const j = list.indexOf(th);
        if (j >= 0) {
          list.splice(j, 1);
          this.waitingOnOps--;
          if (!list.length) this.opWaiters.delete(op);
        }
      }
      for (const waiters of this.contextWaiters) {
        const j = waiters.indexOf(th);
        if (j >= 0) waiters.splice(j, 1);
      }
      this.resume(th, this.blockedSince[th]!);
    }
    return this.result();
  }

  private result(): ReplayResult {
    const { start, end, done } = this;
    const n = start.length;
    let gs = Infinity;
    let ge = -Infinity;
    for (let i = 0; i < n; i++) {
      // An op that never began (its dependencies never met) holds its earliest start: 0, as an op never written.
      if (!done[i]) start[i] = 0;
      if (start[i]! < gs) gs = start[i]!;
      if (end[i]! > ge) ge = end[i]!;
    }
    const busy = new Map<number, number>();
    for (const [id, d] of this.model.devIndex) busy.set(id, this.busySum[d]!);
    if (n === 0) return { start, end, makespanNs: 0, gpuSpanNs: 0, gpuStart: 0, gpuEnd: 0, firstIssue: 0, busy };
    return { start, end, makespanNs: ge - Math.min(this.firstIssue, gs), gpuSpanNs: ge - gs, gpuStart: gs, gpuEnd: ge, firstIssue: this.firstIssue, busy };
  }

  // -------------------------------------------------------------------------
  // Durations

  /** How long op i runs by itself: the fix's duration, else the recorded one less its duplex slowdown. */
  private runTime(i: number): number {
    const o = this.duration ? this.duration[i]! : NaN;
    return Number.isNaN(o) ? this.model.work[i]! : o;
  }

  /** How long call k takes when it does not wait: the fix's time, else its recorded duration (a freed call: its CPU time). */
  private callTime(k: number): number {
    const o = this.callDuration ? this.callDuration[k]! : NaN;
    if (!Number.isNaN(o)) return o;
    return this.freed && this.freed[k] ? this.model.cost[k]! : this.host.calls.end[k]! - this.host.calls.start[k]!;
  }

  /** What call k still takes after what it waited for completed: its CPU time, unless the fix set the call's time. */
  private tailTime(k: number): number {
    const o = this.callDuration ? this.callDuration[k]! : NaN;
    return Number.isNaN(o) ? this.model.cost[k]! : o;
  }

  /** When op x may start after what it depended on ended at t (the GPU's dependency latency). */
  private afterDependency(x: number, t: number): number {
    const o = this.afterLatency !== null ? this.afterLatency[x]! : NaN;
    if (!Number.isNaN(o)) return t + o;
    return t + this.dependencyLatency[this.devOf[x]! * 4 + this.opKind[x]!]!;
  }

  // -------------------------------------------------------------------------
  // An op's way: release → acquire → begin → complete

  /** Is legacy-stream op i held by the barrier: blocking work of its context issued before it still running? */
  private heldByBarrier(i: number): boolean {
    return this.legacy !== null && this.isLegacyStream[this.opStream[i]!] === 1 && this.blockingDone!.count(this.ctxOfOp[i]!) < this.legacy.need[i]!;
  }

  /** All edges into op i are satisfied (at t, or earlier if t = now): it may start once its earliest start has come. */
  private release(i: number, t: number): void {
    if (this.heldByBarrier(i)) {
      this.legacyWaiter[this.ctxOfOp[i]!] = i;
      return;
    }
    const r = Math.max(t, this.readyMin[i]!);
    if (r > this.clock[0]!) {
      if (!this.readyRun.append(r, i | READY)) this.heap.push(r, i | READY);
    } else this.acquire(i, r);
  }

  /** One edge into op j is satisfied at t. */
  private satisfy(j: number, t: number): void {
    if (--this.pending[j]! === 0) this.release(j, t);
  }

  /** Op i's earliest start has come: it takes its resource and begins, or queues for it. */
  private acquire(i: number, t: number): void {
    if (this.resources.acquire(i)) this.begin(i, t);
  }

  /** Op i holds its resource: it runs from t. */
  private begin(i: number, t: number): void {
    this.start[i] = t;
    const d = this.devOf[i]!;
    if (this.running[d]!++ === 0) this.busyOpen[d] = t;
    const alone = this.runTime(i);
    if (this.resources.beginContended(i, t, alone)) return;
    const e = t + alone;
    this.end[i] = e;
    if (!this.endRun.append(e, i)) this.heap.push(e, i);
  }

  /**
   * Op i's completion event, at now (clock[0]): its end, and not yet done (run()
   * drops or re-times a duplex copy's completion that its end moved away
   * from). (The time is read from the clock, not passed: the call is not
   * inlined, and a time passed to a call that is not is boxed, a heap
   * number per event for the garbage collector.)
   */
  private complete(i: number): void {
    const t = this.clock[0]!;
    const { done, resources } = this;
    done[i] = 1;
    const d = this.devOf[i]!;
    if (--this.running[d]! === 0) this.busySum[d]! += t - this.busyOpen[d]!;

    // Its resource goes to whoever is next.
    const eng = resources.engineOf(i);
    const nx = this.nextInStream[i]!;
    let chained = -1;
    if (eng >= 0) {
      resources.endContended(i, eng);
      if (nx >= 0 && resources.engineOf(nx) === eng && this.pending[nx] === 1 && this.readyMin[nx]! <= t + this.chainLatency[eng]! && !this.heldByBarrier(nx)) {
        // The engine goes on with this stream's next copy, waiting for
        // nothing but this one, ahead of other streams' queued copies
        // (replay-host.ts: Latencies.chain). It keeps the engine.
        chained = nx;
        this.pending[nx] = 0;
        this.heap.push(t + this.chainLatency[eng]!, nx | BEGIN);
      } else {
        const q = resources.nextCopy(eng);
        if (q >= 0) {
          const gap = this.engineLatency[eng]!;
          if (gap > 0) this.heap.push(t + gap, q | BEGIN);
          else this.begin(q, t);
        }
      }
    } else if (this.opKind[i] === KERNEL) {
      resources.releaseSms(i, d);
      for (let q = resources.nextKernel(d); q >= 0; q = resources.nextKernel(d)) this.begin(q, t);
    }

    // Its dependents: the next op of its stream, event waiters, legacy barrier edges.
    if (nx >= 0 && nx !== chained) this.satisfy(nx, this.afterDependency(nx, t));
    // (Without any such edge the per-op bounds are all 0: not read.)
    const { edgeStart, edgeTo } = this.graph;
    if (edgeTo.length)
      for (let j = edgeStart[i]!; j < edgeStart[i + 1]!; j++) {
        const x = edgeTo[j]!;
        this.satisfy(x, this.afterDependency(x, t));
      }

    // The work of its context completed so far: the legacy-stream op held by
    // the barrier, and threads in a device synchronize, may go on.
    const c = this.ctxOfOp[i]!;
    if (this.blockingDone !== null && this.isBlockingStream[this.opStream[i]!]) {
      const reached = this.blockingDone.advance(c, done);
      const l = this.legacyWaiter[c]!;
      if (l >= 0 && reached >= this.legacy!.need[l]!) {
        this.legacyWaiter[c] = -1;
        this.release(l, this.afterDependency(l, t));
      }
    }
    // (Stepped over only when a thread waits on the context: a device
    // synchronize that asks later steps over what completed meanwhile.)
    const waiters = this.contextWaiters[c]!;
    if (waiters.length) {
      const reached = this.contextDone.advance(c, done);
      const waitArg = this.model.waitArg;
      for (let j = 0; j < waiters.length;) {
        const th = waiters[j]!;
        if (reached >= waitArg[this.blockedCall[th]!]!) {
          waiters.splice(j, 1);
          this.resume(th, t);
        } else j++;
      }
    }
    // Threads in a stream or event synchronize, or a blocking copy, waiting for this op.
    if (this.waitingOnOps) {
      const list = this.opWaiters.get(i);
      if (list) {
        this.opWaiters.delete(i);
        this.waitingOnOps -= list.length;
        for (const th of list) this.resume(th, t);
      }
    }
  }

  // -------------------------------------------------------------------------
  // Host threads

  /**
   * Thread th makes its calls from where it stopped, issuing their ops,
   * until a call waits for something not yet done (it blocks: a completion
   * resumes it) or its calls run out.
   */
  private runThread(th: number): void {
    // A thread woken by another's handoff runs once that one has stopped
    // (its state written back), not inside it.
    if (this.running_) {
      this.wake.push(th);
      return;
    }
    this.running_ = true;
    this.runCalls(th);
    while (this.wake.length) this.runCalls(this.wake.pop()!);
    this.running_ = false;
  }

  private runCalls(th: number): void {
    const { model, freed, lagUnknown, readyMin, pending, callEnd } = this;
    const handoff = callEnd !== null ? model.handoff : null;
    const { outer, waitsOwn, waitKind, waitArg, waitCtx, order, callPos } = model;
    const opCall = this.host.opCall;
    const n = order.length;
    const callStart = this.host.calls.start;
    const recordedEnd = this.host.calls.end;
    const opStart = this.opStart;
    const calls = model.threadCalls[th]!;
    let pos = this.threadPos[th]!;
    let clock = this.threadClock[th]!;
    let prevEnd = this.threadPrevEnd[th]!;
    let started = this.threadStarted[th]!;
    while (pos < calls.length) {
      const call = calls[pos]!;
      if (outer[call] !== call) {
        pos++;
        continue;
      } // issued with its outer call below
      // It starts after the host time that preceded it in the recording.
      const recordedStart = callStart[call]!;
      const gap = this.callGap !== null && !Number.isNaN(this.callGap[call]!) ? this.callGap[call]! : Math.max(0, recordedStart - prevEnd);
      let startAt = started ? clock + gap : recordedStart;
      const from = handoff !== null && this.handoffSkip[th] !== call ? handoff[call]! : -1;
      if (from >= 0) {
        // Handed over by another thread: it starts as long after that
        // thread's call ends as it did in the recording, its own idle time
        // before it being that wait.
        const e = callEnd![from]!;
        if (Number.isNaN(e)) {
          const list = this.callWaiters.get(from);
          if (list) list.push(th);
          else this.callWaiters.set(from, [th]);
          this.handoffWait[th] = from;
          break;
        }
        startAt = Math.max(started ? clock : -Infinity, e + (recordedStart - recordedEnd[from]!));
      }
      started = 1;
      prevEnd = recordedEnd[call]!;
      const duration = this.callTime(call);
      // Issue its ops and those of the calls nested in it, each at its
      // recorded offset into the call (within the call's replayed time).
      for (let j = pos; j < calls.length; j++) {
        const part = calls[j]!;
        if (j > pos && outer[part] !== call) break;
        const partStart = callStart[part]!;
        const issueAt = startAt + Math.min(Math.max(0, partStart - recordedStart), duration);
        const waitsForOwn = waitsOwn[part] && !(freed && freed[part]);
        // Its ops follow each other in the issue order from callPos (the host
        // model emits them together): read up to the first of another call.
        for (let p = callPos[part]!; p < n; p++) {
          const i = order[p]!;
          if (opCall[i] !== part) break;
          if (issueAt < this.firstIssue) this.firstIssue = issueAt;
          // Launch lag: the op's own recorded lag where it did not wait for
          // anything else (its call blocked until it was done); else the
          // device's launch latency after the call returns, or its own lag
          // if shorter.
          const ownLag = lagUnknown !== null && lagUnknown[i] ? Infinity : opStart[i]! - partStart;
          const estimate = (part === call ? duration : 0) + this.launchLatency[this.devOf[i]! * 4 + this.opKind[i]!]!;
          const lag = waitsForOwn && ownLag !== Infinity ? ownLag : Math.min(ownLag, estimate);
          readyMin[i] = issueAt + (lag > 0 ? lag : 0);
          if (--pending[i]! === 0) this.release(i, issueAt);
        }
      }
      pos++;
      // Does the call wait, and for what (replay-host.ts)?
      const kind = freed && freed[call] ? WAIT_NONE : waitKind[call]!;
      if (kind === WAIT_NONE) {
        clock = startAt + duration;
        if (callEnd !== null) this.ended(call, clock);
        continue;
      }
      const tail = this.tailTime(call);
      if (kind === WAIT_OP) {
        const target = waitArg[call]!;
        if (this.done[target]) {
          clock = Math.max(startAt, this.end[target]!) + tail;
          if (callEnd !== null) this.ended(call, clock);
          continue;
        }
        const list = this.opWaiters.get(target);
        if (list) list.push(th);
        else this.opWaiters.set(target, [th]);
        this.waitingOnOps++;
      } else {
        const c = waitCtx[call]!;
        if (this.contextDone.advance(c, this.done) >= waitArg[call]!) {
          clock = startAt + tail;
          if (callEnd !== null) this.ended(call, clock);
          continue;
        }
        this.contextWaiters[c]!.push(th);
      }
      this.blockedSince[th] = startAt;
      this.blockedCall[th] = call;
      break;
    }
    this.threadPos[th] = pos;
    this.threadClock[th] = clock;
    this.threadPrevEnd[th] = prevEnd;
    this.threadStarted[th] = started;
  }

  /** What blocked thread th waited for completed at t: its call returns after its tail, and the thread goes on. */
  private resume(th: number, t: number): void {
    const k = this.blockedCall[th]!;
    this.threadClock[th] = Math.max(this.blockedSince[th]!, t) + this.tailTime(k);
    this.blockedCall[th] = -1;
    if (this.callEnd !== null) this.ended(k, this.threadClock[th]!);
    this.runThread(th);
  }

  /** Call k's replayed end is t: the threads it hands over to may go on. */
  private ended(k: number, t: number): void {
    this.callEnd![k] = t;
    const waiting = this.callWaiters.get(k);
    if (!waiting) return;
    this.callWaiters.delete(k);
    for (const th of waiting) {
      this.handoffWait[th] = -1;
      this.runThread(th);
    }
  }
}
