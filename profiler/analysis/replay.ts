// What-if replay: a discrete-event simulation of a recording's GPU
// operations, so that one cause of serialization can be removed (whatif.ts)
// and the run time measured again. It models, and validates against the
// recording itself (test/analysis/replay.test.ts):
//
//  * the host. Each thread makes its recorded calls in order; the time
//    between two calls (host compute) and each call's own CPU time are kept.
//    A call that blocked the host (explicit synchronize, synchronous copy,
//    async copy from/to pageable memory, cudaFree-like implicit syncs)
//    returns when what it waited for completes in the replay, plus its
//    non-waiting CPU time (recorded duration minus recorded wait, floored),
//    so a shorter wait moves everything the thread does afterwards earlier.
//    What a call waited for is inferred from the recording (replay-host.ts):
//    a device sync waits for all work issued before it on its context, a
//    stream or event sync for one operation, a blocking copy for itself.
//  * GPU order: stream order; the legacy default stream's implicit barrier
//    (it waits for all work issued before it to blocking streams of its
//    context, and work issued to those streams later waits for it);
//    cudaStreamWaitEvent (the stream's next operation waits for what the
//    event's last record captured); an operation starts no earlier than its
//    launch latency after its call, and no earlier than the GPU's
//    dependency latency after what it waited for ended (`Latencies` in replay-host.ts, each
//    measured from the recording).
//  * resources: one copy engine per direction and device (HtoD, DtoH; one
//    shared engine where async_engine_count ≤ 1): same-direction copies run
//    one at a time, first come first served. Kernels share the SMs: each
//    occupies blocks / (SMs × resident blocks per SM) of the device (capped
//    at 1; resident blocks per SM from the threads / registers / shared
//    memory / blocks per SM limits of the devices table). A kernel starts
//    when its share fits beside the running ones, in arrival order (a big
//    kernel at the head of the queue holds back later small ones, as the
//    block scheduler does). Priorities are not modelled. This is an approximation: a real kernel whose
//    grid does not fit starts dispatching blocks into partial room and its
//    recorded duration already contains whatever sharing happened then.
//    DtoD, PtoP, HtoH copies and memsets take no modelled resource.
//    Duplex contention: while a pinned HtoD and a pinned DtoH copy of one
//    device run together, each progresses at its direction's duplex factor
//    (bandwidth.ts: ~0.935 and ~0.89 on an H100) and its end moves when the
//    other starts or ends. Recorded durations are first scaled back to what
//    each copy would have taken alone, so the unchanged replay keeps them,
//    and a fix that makes copies overlap makes them slower, as they are.
//  * durations as recorded, unless the caller (a fix) overrides them.
// Approximations, beyond those above: cross-thread ordering that the
// program enforces itself (locks, joins) is not seen; the issue order of
// threads and of event records is the recorded one; cudaSetDevice is not
// recorded, so a device sync's device is inferred (the one whose work
// completed inside the call, else the thread's last one).
//
// Events run in time order on a 4-ary heap; everything per operation lives
// in typed arrays, and nothing is allocated per operation (10 M operations:
// ~2.5 s, see the performance test).
import type { Ns } from '../contract/time.ts';
import { isPinnedTransfer } from './bandwidth.ts';
import type { Host } from './host.ts';
import { blocksPerSm } from './occupancy.ts';
import { hostModel, WaitKind, type HostModel } from './replay-host.ts';
import { OpCategory, OpKind, type DeviceRow, type Trace } from './trace.ts';

// Enum values as module constants: the hot loops read them per op, and a test
// runner that rewrites imports into property reads (vitest) made each read a
// lookup on the imported module's namespace.
const KERNEL = OpKind.Kernel;
const MEMCPY = OpKind.Memcpy;
const HTOD = OpCategory.HtoD;
const DTOH = OpCategory.DtoH;
const pinnedTransfer = isPinnedTransfer;

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
  /** contexts.id of streams not in the recording's table. */
  streamContext?: Map<number, number>;
  /** Per op: 1 = its recorded launch lag no longer applies (e.g. a pageable copy's staging delay). */
  lagUnknown?: Uint8Array;
  /** Per call: 1 = the call no longer waits for anything (it returns after its CPU time). */
  freed?: Uint8Array;
  /** Per call: CPU time (ns) to use instead of the recorded one; NaN = unchanged. */
  callDuration?: Float64Array;
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

// ---------------------------------------------------------------------------
// Resources

function anyLegacyOp(opStream: Int32Array, isLegacyStream: Uint8Array): boolean {
  for (let i = 0; i < opStream.length; i++) if (isLegacyStream[opStream[i]!]) return true;
  return false;
}

/**
 * Growable 4-ary min-heap of (time, code) in typed arrays: half the depth
 * of a binary heap, which the profile showed as the event loop's main
 * cost. Ties by code (completions before readiness, then by op), so the
 * replay is deterministic.
 */
class EventHeap {
  time = new Float64Array(1024);
  code = new Int32Array(1024);
  size = 0;
  push(t: number, c: number): void {
    if (this.size === this.time.length) {
      const time = new Float64Array(this.size * 2); time.set(this.time); this.time = time;
      const code = new Int32Array(this.size * 2); code.set(this.code); this.code = code;
    }
    const T = this.time;
    const C = this.code;
    let i = this.size++;
    while (i > 0) {
      const p = (i - 1) >> 2;
      const tp = T[p]!;
      if (tp < t || (tp === t && C[p]! <= c)) break;
      T[i] = tp; C[i] = C[p]!; i = p;
    }
    T[i] = t; C[i] = c;
  }
  /** Removes the minimum; read it from time[0]/code[0] first. */
  pop(): void {
    const T = this.time;
    const C = this.code;
    const n = --this.size;
    const t = T[n]!;
    const c = C[n]!;
    let i = 0;
    for (;;) {
      const first = 4 * i + 1;
      if (first >= n) break;
      // The smallest of up to four children.
      let m = first;
      let tm = T[first]!;
      const last = first + 4 < n ? first + 4 : n;
      for (let j = first + 1; j < last; j++) {
        const tj = T[j]!;
        if (tj < tm || (tj === tm && C[j]! < C[m]!)) { m = j; tm = tj; }
      }
      if (t < tm || (t === tm && c <= C[m]!)) break;
      T[i] = tm; C[i] = C[m]!; i = m;
    }
    T[i] = t; C[i] = c;
  }
}

// Event codes: the op index, plus BEGIN when it starts on a resource it
// already holds (a queued copy after the engine's handoff gap), READY when
// it may request its resource; neither: it completes. At equal times
// completions (smaller codes) come first, so a freed engine or SMs are
// seen by the ops that become ready then.
const BEGIN = 1 << 29;
const READY = 2 << 29;
const OP_MASK = BEGIN - 1;

// ---------------------------------------------------------------------------
// The replay

/** What every replay of a recording shares, computed on its first replay. */
interface Statics {
  /** Per kernel: share of its device it occupies (0: unknown shape or device, no limit). */
  share: Float32Array;
  /** The ops of call k are order[callPos[k] .. posEnd[k]) (the model emits them together). */
  posEnd: Int32Array;
  /** Ops of each context in issue order (device-sync prefixes): ctxOrder[ctxStart[c] .. ctxStart[c + 1]). */
  ctxStart: Int32Array;
  ctxOrder: Int32Array;
}
const staticsOf = new WeakMap<HostModel, Statics>();

function statics(trace: Trace, host: Host, m: HostModel): Statics {
  let st = staticsOf.get(m);
  if (st) return st;
  const { ops } = trace;
  const n = ops.length;
  const devRows: (DeviceRow | undefined)[] = new Array(m.devIndex.size);
  for (const d of trace.devices) devRows[m.devIndex.get(d.id)!] = d;
  const share = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    if (ops.kind[i] !== KERNEL) continue;
    const dev = devRows[m.devOf[i]!];
    if (!dev?.smCount || ops.blocks[i]! <= 0) continue;
    share[i] = Math.min(1, ops.blocks[i]! / (dev.smCount * blocksPerSm(dev, ops.blockThreads[i]!, ops.registers[i]!, ops.sharedBytes[i]!)));
  }
  const posEnd = m.callPos.slice();
  for (let p = 0; p < n; p++) { const k = host.opCall[m.order[p]!]!; if (k >= 0) posEnd[k] = p + 1; }
  const C = m.contexts;
  const ctxStart = new Int32Array(C + 1);
  for (let i = 0; i < n; i++) ctxStart[m.ctxOfOp[i]! + 1]!++;
  for (let c = 0; c < C; c++) ctxStart[c + 1]! += ctxStart[c]!;
  const ctxOrder = new Int32Array(n);
  const fill = ctxStart.slice(0, C);
  for (let p = 0; p < n; p++) { const i = m.order[p]!; ctxOrder[fill[m.ctxOfOp[i]!]!++] = i; }
  staticsOf.set(m, (st = { share, posEnd, ctxStart, ctxOrder }));
  return st;
}

/**
 * Per-op working arrays, kept between replays of one recording: a replay
 * of 10 M ops needs ~300 MB of them, and allocating that anew for each
 * estimate made later replays slower (garbage collection).
 */
interface Scratch { nextInStream: Int32Array; pending: Int32Array; queueNext: Int32Array; readyMin: Float64Array; done: Uint8Array; opStream: Int32Array; inUse: boolean }
const scratchOf = new WeakMap<HostModel, Scratch>();

function scratch(m: HostModel, n: number): Scratch {
  let sc = scratchOf.get(m);
  if (!sc || sc.inUse) {
    sc = { nextInStream: new Int32Array(n), pending: new Int32Array(n), queueNext: new Int32Array(n), readyMin: new Float64Array(n), done: new Uint8Array(n), opStream: new Int32Array(n), inUse: false };
    if (!scratchOf.has(m)) scratchOf.set(m, sc);
  }
  sc.nextInStream.fill(-1);
  sc.pending.fill(0);
  sc.queueNext.fill(-1);
  sc.readyMin.fill(0);
  sc.done.fill(0);
  return sc;
}

export function replay(trace: Trace, host: Host, options: ReplayOptions = {}): ReplayResult {
  const m = hostModel(trace, host);
  const sc = scratch(m, trace.ops.length);
  // Released whatever happens: a replay that threw must not leave the
  // scratch arrays marked busy, or every later replay of this recording
  // would allocate ~300 MB of its own.
  sc.inUse = true;
  try {
    return simulate(trace, host, options, m, sc);
  } finally {
    sc.inUse = false;
  }
}

function simulate(trace: Trace, host: Host, options: ReplayOptions, m: HostModel, sc: Scratch): ReplayResult {
  const { ops } = trace;
  const { calls } = host;
  const n = ops.length;
  const duration = options.duration ?? null;
  const streamOf = options.stream ?? ops.stream;
  const freed = options.freed ?? null;
  const callDuration = options.callDuration ?? null;
  const lagUnknown = options.lagUnknown ?? null;
  // The model's arrays as locals: the event loop reads them per op.
  const { order, callPos, outer, waitsOwn, waitKind, waitArg, waitCtx, ctxOfOp } = m;
  const callCost = m.cost;
  const launchLat = m.latency.launch;
  const depLat = m.latency.dependency;
  const engineLat = m.latency.engine;
  const chainLat = m.latency.chain;
  const opCall = host.opCall;
  const opStart = ops.start;
  const opKind = ops.kind;
  const callStart = calls.start;
  const callEnd = calls.end;

  // Dense streams with their flags and context.
  const rows = new Map(trace.streams.map((s) => [s.id, s]));
  let maxId = 0;
  for (let i = 0; i < n; i++) if (streamOf[i]! > maxId) maxId = streamOf[i]!;
  const denseOf = new Int32Array(maxId + 1).fill(-1);
  const sFlags: number[] = [];
  const sCtx: number[] = [];
  const st = statics(trace, host, m);
  const opStream = sc.opStream;
  for (let i = 0; i < n; i++) {
    const id = streamOf[i]!;
    let s = denseOf[id]!;
    if (s < 0) {
      denseOf[id] = s = sFlags.length;
      sFlags.push(options.streamFlags?.get(id) ?? rows.get(id)?.flags ?? 0);
      const ctxKey = rows.get(id)?.contextId ?? options.streamContext?.get(id);
      sCtx.push(ctxKey !== undefined && m.ctxIndex.has(ctxKey) ? m.ctxIndex.get(ctxKey)! : ctxOfOp[i]!);
    }
    opStream[i] = s;
  }
  const S = sFlags.length;
  const C = m.contexts;
  // Per-thread default streams are blocking (they synchronize with the legacy stream); non-blocking ones are not.
  const isLegacyStream = Uint8Array.from(sFlags, (f) => (f & 1 ? 1 : 0));
  const isBlockingStream = Uint8Array.from(sFlags, (f) => (f & 3 ? 0 : 1));

  // Static dependencies, walking ops in issue order.
  const nextInStream = sc.nextInStream;
  const pending = sc.pending;
  const lastOfStream = new Int32Array(S).fill(-1);
  const streamSawLegacy = new Int32Array(S).fill(-1);
  const lastLegacy = new Int32Array(C).fill(-1);
  const blockingCount = new Int32Array(C);
  const legacyNeed = new Int32Array(anyLegacyOp(opStream, isLegacyStream) ? n : 0); // legacy op: blocking ops of its context issued before it
  const { ctxStart, ctxOrder } = st;
  const anyLegacy = legacyNeed.length > 0;
  const blkStart = anyLegacy ? ctxStart : null;
  const blkOrder = anyLegacy ? new Int32Array(n) : null; // blocking-stream ops of each context in issue order
  const blkFill = anyLegacy ? ctxStart.slice(0, C) : null;
  const edgeFrom: number[] = [];
  const edgeTo: number[] = [];
  const { eventOps } = m;
  const capturedOp = new Map<string, number>();
  const pendingWaits: number[][] = Array.from({ length: S }, () => []);
  let e = 0;
  for (let p = 0; p < n; p++) {
    while (e < eventOps.length && eventOps[e]!.pos <= p) {
      const ev = eventOps[e++]!;
      const s = ev.stream <= maxId ? denseOf[ev.stream]! : -1;
      if (!ev.wait) capturedOp.set(ev.key, s >= 0 ? lastOfStream[s]! : -1);
      else if (s >= 0) { const c = capturedOp.get(ev.key); if (c !== undefined && c >= 0) pendingWaits[s]!.push(c); }
    }
    const i = order[p]!;
    const s = opStream[i]!;
    const c = ctxOfOp[i]!;
    const prev = lastOfStream[s]!;
    if (prev >= 0) { nextInStream[prev] = i; pending[i]!++; }
    lastOfStream[s] = i;
    if (opCall[i]! >= 0) pending[i]!++; // issued by its call
    const w = pendingWaits[s]!;
    if (w.length) { for (const from of w) { edgeFrom.push(from); edgeTo.push(i); } w.length = 0; }
    if (anyLegacy) {
      if (isLegacyStream[s]) {
        legacyNeed[i] = blockingCount[c]!;
        lastLegacy[c] = i;
      } else if (isBlockingStream[s]) {
        blkOrder![blkFill![c]!++] = i;
        blockingCount[c]!++;
        const l = lastLegacy[c]!;
        if (l >= 0 && streamSawLegacy[s] !== l) { edgeFrom.push(l); edgeTo.push(i); streamSawLegacy[s] = l; }
      }
    }
  }
  // Extra dependencies (events, legacy barrier) as CSR by source.
  const depStart = new Int32Array(n + 1);
  for (const f of edgeFrom) depStart[f + 1]!++;
  for (let i = 0; i < n; i++) depStart[i + 1]! += depStart[i]!;
  const depTo = new Int32Array(edgeFrom.length);
  {
    const fill = depStart.slice(0, n);
    for (let j = 0; j < edgeFrom.length; j++) { depTo[fill[edgeFrom[j]!]!++] = edgeTo[j]!; pending[edgeTo[j]!]!++; }
  }

  // Resources per dense device.
  const D = m.devIndex.size;
  const devRows: (DeviceRow | undefined)[] = new Array(D);
  for (const d of trace.devices) devRows[m.devIndex.get(d.id)!] = d;
  const sharedEngine = devRows.map((d) => (d?.asyncEngineCount ?? 2) <= 1);
  const engineBusy = new Uint8Array(D * 2);
  const engineHead = new Int32Array(D * 2).fill(-1);
  const engineTail = new Int32Array(D * 2).fill(-1);
  const smUsed = new Float64Array(D);
  const smRunning = new Int32Array(D);
  const smHead = new Int32Array(D).fill(-1);
  const smTail = new Int32Array(D).fill(-1);
  const queueNext = sc.queueNext;

  const start = new Float64Array(n);
  const end = new Float64Array(n);
  const readyMin = sc.readyMin;
  const done = sc.done;
  const devOf = m.devOf;
  // Ops without a call are released at their recorded start.
  for (let i = 0; i < n; i++) if (opCall[i]! < 0) readyMin[i] = ops.start[i]!;

  // Prefix pointers: all ops of a context (device syncs), blocking ops (legacy barrier).
  const ctxPtr = ctxStart.slice(0, C);
  const blkPtr = anyLegacy ? ctxStart.slice(0, C) : null;
  const legacyWaiter = new Int32Array(C).fill(-1);

  // Host threads.
  const T = m.threadCalls.length;
  const tPos = new Int32Array(T);
  const tClock = new Float64Array(T);
  const tStarted = new Uint8Array(T);
  const tPrevEnd = new Float64Array(T); // recorded end of the previous outer call
  const tBlockedStart = new Float64Array(T);
  const tBlockedCall = new Int32Array(T).fill(-1);
  const opWaiters = new Map<number, number[]>(); // op → threads blocked on it
  let waitingOnOps = 0;
  const posEnd = st.posEnd;
  const ctxWaiters: number[][] = Array.from({ length: C }, () => []); // threads blocked on a prefix
  let firstIssue = Infinity;

  const heap = new EventHeap();
  let now = -Infinity;
  // Busy time per device: ops running, counted as they begin and complete (in time order).
  const running = new Int32Array(D);
  const busyOpen = new Float64Array(D);
  const busySum = new Float64Array(D);
  const work = m.work;
  const durationOf = (i: number) => {
    const o = duration ? duration[i]! : NaN;
    return Number.isNaN(o) ? work[i]! : o;
  };
  // Duplex: per engine its running copy, uncontended work left, when that
  // was last brought up to date, and its current speed (1 or the factor).
  const pinnedOpt = options.pinned ?? null;
  const duplexes = (i: number) => (pinnedOpt !== null && pinnedOpt[i] === 1) || pinnedTransfer(trace, i);
  const engineOp = new Int32Array(D * 2).fill(-1);
  const engineLeft = new Float64Array(D * 2);
  const engineAt = new Float64Array(D * 2);
  const engineSpeed = new Float64Array(D * 2).fill(1);
  const duplexF = m.duplex;
  const reschedule = (e: number, t: number, speed: number) => {
    // Bring engine e's copy up to t at its old speed, then go on at `speed`.
    const i = engineOp[e]!;
    engineLeft[e]! -= (t - engineAt[e]!) * engineSpeed[e]!;
    if (engineLeft[e]! < 0) engineLeft[e] = 0;
    engineAt[e] = t;
    engineSpeed[e] = speed;
    const e2 = t + engineLeft[e]! / speed;
    // Later than planned: the event already queued finds it moved and
    // queues it again (complete()); earlier: queue it now.
    const queued = end[i]!;
    end[i] = e2;
    if (e2 < queued || !(queued > t)) heap.push(e2, i);
  };
  const callDur = (k: number) => {
    const o = callDuration ? callDuration[k]! : NaN;
    if (!Number.isNaN(o)) return o;
    return freed && freed[k] ? callCost[k]! : calls.end[k]! - calls.start[k]!;
  };

  const begin = (i: number, t: number) => {
    start[i] = t;
    const d = devOf[i]!;
    if (running[d]!++ === 0) busyOpen[d] = t;
    const eng = engineOf(i);
    if (eng >= 0 && !sharedEngine[d] && duplexes(i)) {
      const other = eng ^ 1;
      const o = engineOp[other]!;
      const both = o >= 0;
      engineOp[eng] = i;
      engineLeft[eng] = durationOf(i);
      engineAt[eng] = t;
      engineSpeed[eng] = 1;
      end[i] = -Infinity; // nothing queued for it yet: reschedule queues it
      if (both) reschedule(other, t, duplexF[other]!);
      reschedule(eng, t, both ? duplexF[eng]! : 1);
      return;
    }
    const e2 = t + durationOf(i);
    end[i] = e2;
    heap.push(e2, i);
  };

  const share = st.share;
  const kernelShare = (i: number): number => share[i]!;

  const engineOf = (i: number): number => {
    const cat = ops.category[i]!;
    if (ops.kind[i] !== MEMCPY || (cat !== HTOD && cat !== DTOH)) return -1;
    const d = devOf[i]!;
    return d * 2 + (sharedEngine[d] || cat === HTOD ? 0 : 1);
  };

  /** Its dependencies are met and its earliest time has come: take the resource or queue for it. */
  const acquire = (i: number, t: number) => {
    const eng = engineOf(i);
    if (eng >= 0) {
      if (!engineBusy[eng]) { engineBusy[eng] = 1; begin(i, t); }
      else { if (engineTail[eng]! >= 0) queueNext[engineTail[eng]!] = i; else engineHead[eng] = i; engineTail[eng] = i; }
      return;
    }
    if (ops.kind[i] === KERNEL) {
      const d = devOf[i]!;
      const share = kernelShare(i);
      if (smHead[d]! < 0 && (smRunning[d] === 0 || smUsed[d]! + share <= 1 + 1e-9)) {
        smUsed[d]! += share; smRunning[d]!++; begin(i, t);
      } else { if (smTail[d]! >= 0) queueNext[smTail[d]!] = i; else smHead[d] = i; smTail[d] = i; }
      return;
    }
    begin(i, t);
  };

  /** All dependencies of op i are met (at time t, or earlier if t = now). */
  const release = (i: number, t: number) => {
    if (anyLegacy && isLegacyStream[opStream[i]!]) {
      const c = ctxOfOp[i]!;
      if (blkPtr![c]! - blkStart![c]! < legacyNeed[i]!) { legacyWaiter[c] = i; return; }
    }
    const r = Math.max(t, readyMin[i]!);
    if (r > now) heap.push(r, i | READY);
    else acquire(i, r);
  };

  const satisfy = (j: number, t: number) => { if (--pending[j]! === 0) release(j, t); };

  /** The host thread runs until a call blocks on something not yet done. */
  const runThread = (th: number) => {
    const list = m.threadCalls[th]!;
    let q0 = tPos[th]!;
    let clock = tClock[th]!;
    let prevEnd = tPrevEnd[th]!;
    let started = tStarted[th]!;
    while (q0 < list.length) {
      const k = list[q0]!;
      if (outer[k] !== k) { q0++; continue; } // issued with its outer call below
      const ks = callStart[k]!;
      const s = started ? clock + Math.max(0, ks - prevEnd) : ks;
      started = 1;
      prevEnd = callEnd[k]!;
      const dur = callDur(k);
      // Issue its ops and those of the calls nested in it.
      for (let q = q0; q < list.length; q++) {
        const kk = list[q]!;
        if (q > q0 && outer[kk] !== k) break;
        const kks = callStart[kk]!;
        const at = s + Math.min(Math.max(0, kks - ks), dur);
        const own = waitsOwn[kk] && !(freed && freed[kk]);
        // Its ops lie right after its position in the issue order.
        for (let p = callPos[kk]!, to = posEnd[kk]!; p < to; p++) {
          const i = order[p]!;
          if (at < firstIssue) firstIssue = at;
          // Launch lag: the op's own recorded lag where it did not wait for
          // anything else; else the device's lag after the call returns.
          const ownLag = lagUnknown !== null && lagUnknown[i] ? Infinity : opStart[i]! - kks;
          const estimate = (kk === k ? dur : 0) + launchLat[devOf[i]! * 4 + opKind[i]!]!;
          const lag = own && ownLag !== Infinity ? ownLag : Math.min(ownLag, estimate);
          readyMin[i] = at + (lag > 0 ? lag : 0);
          if (--pending[i]! === 0) release(i, at);
        }
      }
      q0++;
      const kind = freed && freed[k] ? WaitKind.None : waitKind[k]!;
      if (kind === WaitKind.None) { clock = s + dur; continue; }
      const cost = Number.isNaN(callDuration ? callDuration[k]! : NaN) ? callCost[k]! : dur;
      if (kind === WaitKind.Op) {
        const target = waitArg[k]!;
        if (done[target]) { clock = Math.max(s, end[target]!) + cost; continue; }
        (opWaiters.get(target) ?? opWaiters.set(target, []).get(target)!).push(th);
        waitingOnOps++;
      } else {
        const c = waitCtx[k]!;
        if (ctxPtr[c]! - ctxStart[c]! >= waitArg[k]!) { clock = s + cost; continue; }
        ctxWaiters[c]!.push(th);
      }
      tBlockedStart[th] = s;
      tBlockedCall[th] = k;
      break;
    }
    tPos[th] = q0;
    tClock[th] = clock;
    tPrevEnd[th] = prevEnd;
    tStarted[th] = started;
  };

  const resume = (th: number, t: number) => {
    const k = tBlockedCall[th]!;
    const cost = Number.isNaN(callDuration ? callDuration[k]! : NaN) ? callCost[k]! : callDur(k);
    tClock[th] = Math.max(tBlockedStart[th]!, t) + cost;
    tBlockedCall[th] = -1;
    runThread(th);
  };

  const complete = (i: number, t: number) => {
    if (done[i]) return;
    if (end[i] !== t) {
      // Duplex contention moved its end since this event was queued.
      if (end[i]! > t) heap.push(end[i]!, i);
      return;
    }
    done[i] = 1;
    const d0 = devOf[i]!;
    if (--running[d0]! === 0) busySum[d0]! += t - busyOpen[d0]!;
    // Free its resource and start whoever queued for it.
    const eng = engineOf(i);
    if (eng >= 0 && engineOp[eng] === i) {
      engineOp[eng] = -1;
      if (engineOp[eng ^ 1]! >= 0) reschedule(eng ^ 1, t, 1); // the other direction speeds up again
    }
    const nx = nextInStream[i]!;
    let chained = -1;
    if (eng >= 0 && nx >= 0 && engineOf(nx) === eng && pending[nx] === 1 && readyMin[nx]! <= t + chainLat[eng]! &&
        !(anyLegacy && isLegacyStream[opStream[nx]!] && blkPtr![ctxOfOp[nx]!]! - blkStart![ctxOfOp[nx]!]! < legacyNeed[nx]!)) {
      // The engine goes on with this stream's next copy (see Latencies.chain).
      chained = nx;
      pending[nx] = 0;
      heap.push(t + chainLat[eng]!, nx | BEGIN);
    } else if (eng >= 0) {
      const q = engineHead[eng]!;
      if (q >= 0) {
        engineHead[eng] = queueNext[q]!;
        if (engineHead[eng]! < 0) engineTail[eng] = -1;
        const gap = engineLat[eng]!;
        if (gap > 0) heap.push(t + gap, q | BEGIN); else begin(q, t);
      }
      else engineBusy[eng] = 0;
    } else if (ops.kind[i] === KERNEL) {
      const d = devOf[i]!;
      smUsed[d]! -= kernelShare(i);
      smRunning[d]!--;
      if (smRunning[d] === 0) smUsed[d] = 0; // no drift
      for (let q = smHead[d]!; q >= 0; q = smHead[d]!) {
        const share = kernelShare(q);
        if (smRunning[d]! > 0 && smUsed[d]! + share > 1 + 1e-9) break;
        smHead[d] = queueNext[q]!;
        if (smHead[d]! < 0) smTail[d] = -1;
        smUsed[d]! += share; smRunning[d]!++; begin(q, t);
      }
    }
    // Dependents.
    const dl = depLat;
    if (nx >= 0 && nx !== chained) satisfy(nx, t + dl[devOf[nx]! * 4 + ops.kind[nx]!]!);
    for (let j = depStart[i]!; j < depStart[i + 1]!; j++) { const x = depTo[j]!; satisfy(x, t + dl[devOf[x]! * 4 + ops.kind[x]!]!); }
    const c = ctxOfOp[i]!;
    if (anyLegacy && isBlockingStream[opStream[i]!]) {
      let p = blkPtr![c]!;
      while (p < blkStart![c + 1]! && done[blkOrder![p]!]) p++;
      blkPtr![c] = p;
      const l = legacyWaiter[c]!;
      if (l >= 0 && p - blkStart![c]! >= legacyNeed[l]!) { legacyWaiter[c] = -1; release(l, t + dl[devOf[l]! * 4 + ops.kind[l]!]!); }
    }
    let p = ctxPtr[c]!;
    while (p < ctxStart[c + 1]! && done[ctxOrder[p]!]) p++;
    ctxPtr[c] = p;
    const cw = ctxWaiters[c]!;
    if (cw.length) {
      const reached = p - ctxStart[c]!;
      for (let j = 0; j < cw.length; ) {
        const th = cw[j]!;
        if (reached >= waitArg[tBlockedCall[th]!]!) { cw.splice(j, 1); resume(th, t); } else j++;
      }
    }
    if (waitingOnOps) {
      const ow = opWaiters.get(i);
      if (ow) { opWaiters.delete(i); waitingOnOps -= ow.length; for (const th of ow) resume(th, t); }
    }
  };

  // Ops without a call that have nothing to wait for, then every thread.
  for (let i = 0; i < n; i++) {
    if (opCall[i]! >= 0) continue;
    if (readyMin[i]! < firstIssue) firstIssue = readyMin[i]!;
    if (pending[i] === 0) release(i, -Infinity);
  }
  // Threads start at their first call; none runs past a blocking call, so
  // the order in which they start does not matter.
  for (let th = 0; th < T; th++) runThread(th);
  for (;;) {
    while (heap.size) {
      const t = heap.time[0]!;
      const code = heap.code[0]!;
      heap.pop();
      now = t;
      if (code & READY) acquire(code & OP_MASK, t);
      else if (code & BEGIN) begin(code & OP_MASK, t);
      else complete(code, t);
    }
    // Nothing left to happen but a thread still waits: the wait was inferred
    // wrongly or timing changes made threads wait for each other. Let the
    // earliest such thread go on as if its call had not waited.
    let th = -1;
    for (let x = 0; x < T; x++) if (tBlockedCall[x]! >= 0 && (th < 0 || tBlockedStart[x]! < tBlockedStart[th]!)) th = x;
    if (th < 0) break;
    for (const [op, list] of opWaiters) { const j = list.indexOf(th); if (j >= 0) { list.splice(j, 1); waitingOnOps--; if (!list.length) opWaiters.delete(op); } }
    for (const cw of ctxWaiters) { const j = cw.indexOf(th); if (j >= 0) cw.splice(j, 1); }
    resume(th, tBlockedStart[th]!);
  }

  let gs = Infinity;
  let ge = -Infinity;
  for (let i = 0; i < n; i++) {
    if (start[i]! < gs) gs = start[i]!;
    if (end[i]! > ge) ge = end[i]!;
  }
  const busy = new Map<number, Ns>();
  for (const [id, d] of m.devIndex) busy.set(id, busySum[d]!);
  if (n === 0) return { start, end, makespanNs: 0, gpuSpanNs: 0, gpuStart: 0, gpuEnd: 0, firstIssue: 0, busy };
  return { start, end, makespanNs: ge - Math.min(firstIssue, gs), gpuSpanNs: ge - gs, gpuStart: gs, gpuEnd: ge, firstIssue, busy };
}
