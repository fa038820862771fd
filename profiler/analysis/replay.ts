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
//    What a call waited for is inferred from the recording (hostModel below):
//    a device sync waits for all work issued before it on its context, a
//    stream or event sync for one operation, a blocking copy for itself.
//  * GPU order: stream order; the legacy default stream's implicit barrier
//    (it waits for all work issued before it to blocking streams of its
//    context, and work issued to those streams later waits for it);
//    cudaStreamWaitEvent (the stream's next operation waits for what the
//    event's last record captured); an operation starts no earlier than its
//    launch latency after its call, and no earlier than the GPU's
//    dependency latency after what it waited for ended (`Latencies`, each
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
import type { Ns } from '../time.ts';
import { DEFAULT_DUPLEX, duplexFactors, isPinnedTransfer, oppositeOverlap, uncontendedDurations } from './bandwidth.ts';
import type { Host } from './host.ts';
import { blocksPerSm } from './occupancy.ts';
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
// What the host's calls waited for: inferred once per recording.

/** No wait, wait for one op, wait for a prefix of a context's issued ops (device sync). */
export const WaitKind = { None: 0, Op: 1, Prefix: 2 } as const;

export interface HostModel {
  /** Ops in issue order (their call's start; ops without a call at their own start). */
  order: Int32Array;
  /** Per call: ops issued before it in `order`. */
  callPos: Int32Array;
  /** Per op: dense context index. */
  ctxOfOp: Int32Array;
  contexts: number;
  /** contexts.id (or a synthetic key) → dense index. */
  ctxIndex: Map<number, number>;
  /** Per call: WaitKind, its argument (op index, or ops of the context to wait for), the context. */
  waitKind: Uint8Array;
  waitArg: Int32Array;
  waitCtx: Int32Array;
  /** Per call: CPU time that is not waiting (ns). */
  cost: Float64Array;
  /** Per call: the outermost call containing it (itself if outermost). */
  outer: Int32Array;
  /** Per call: 1 if it waits for the op(s) it issued itself (blocking copy). */
  waitsOwn: Uint8Array;
  /** The GPU's latencies, measured from the recording. */
  latency: Latencies;
  /** Per op: duration had it run alone (recorded, less its duplex slowdown). */
  work: Float64Array;
  /** Duplex factor per dense device × engine (0 HtoD, 1 DtoH). */
  duplex: Float64Array;
  devIndex: Map<number, number>;
  /** Per op: dense device index. */
  devOf: Int32Array;
  /** cudaEventRecord / cudaStreamWaitEvent calls by position in `order`. */
  eventOps: { pos: number; wait: boolean; stream: number; key: string }[];
  /** Per call: thread index (into threadCalls). */
  threadCalls: Int32Array[];
}

/** A blocked call's tail (wake-up and return) is never modelled as shorter than this. */
const MIN_CALL_COST_NS = 1_000;
/** CPU and GPU clocks agree to a few µs: a wait target may end this much after the call. */
const CLOCK_SLACK_NS = 5_000;

const DEVICE_SYNC = new Set(['cudaDeviceSynchronize', 'cudaThreadSynchronize', 'cuCtxSynchronize']);
const STREAM_SYNC = new Set(['cudaStreamSynchronize', 'cuStreamSynchronize']);
const EVENT_SYNC = new Set(['cudaEventSynchronize', 'cuEventSynchronize']);
/** Calls that synchronize the device implicitly (only counted where the recording shows a wait). */
const IMPLICIT_SYNC = new Set([
  'cudaFree', 'cudaFreeHost', 'cudaMallocHost', 'cudaHostAlloc', 'cudaHostRegister', 'cudaHostUnregister', 'cudaFreeArray',
  'cuMemFree', 'cuMemFreeHost', 'cuMemAllocHost', 'cuMemHostAlloc', 'cuMemHostRegister', 'cuMemHostUnregister',
]);
const NameClass = { Other: 0, Device: 1, Stream: 2, Event: 3, Implicit: 4 } as const;

function baseName(name: string): string {
  return name.replace(/_ptsz$|_ptds$/, '').replace(/_v\d+$/, '');
}

function nameClass(name: string): number {
  const b = baseName(name);
  return DEVICE_SYNC.has(b) ? NameClass.Device : STREAM_SYNC.has(b) ? NameClass.Stream : EVENT_SYNC.has(b) ? NameClass.Event : IMPLICIT_SYNC.has(b) ? NameClass.Implicit : NameClass.Other;
}

/** cudaDeviceSynchronize, cudaStreamSynchronize, cudaEventSynchronize and their driver forms (any _v2/_ptsz suffix). */
export function isExplicitSync(name: string): boolean {
  const c = nameClass(name);
  return c === NameClass.Device || c === NameClass.Stream || c === NameClass.Event;
}

const PAGEABLE = 1;
/** A copy from/to pageable host memory: the call returns only when the copy is staged or done. */
export function isPageableCopy(trace: Trace, i: number): boolean {
  const { ops } = trace;
  if (ops.kind[i] !== MEMCPY) return false;
  const c = ops.category[i]!;
  return (c === HTOD && ops.detail[i]! >> 4 === PAGEABLE) || (c === DTOH && (ops.detail[i]! & 15) === PAGEABLE);
}

/** Non-negative small integer → non-negative integer (-1 if absent): an array where the keys allow, else a Map. */
class SmallIntMap {
  private table = new Int32Array(64).fill(-1);
  private map: Map<number, number> | null = null;
  get(key: number): number {
    if (key >= 0 && key < this.table.length) return this.table[key]!;
    return this.map?.get(key) ?? -1;
  }
  set(key: number, value: number): void {
    if (key >= 0 && key < 1 << 22) {
      if (key >= this.table.length) {
        const t = new Int32Array(Math.max(key + 1, this.table.length * 2)).fill(-1);
        t.set(this.table);
        this.table = t;
      }
      this.table[key] = value;
    } else (this.map ??= new Map()).set(key, value);
  }
}

const models = new WeakMap<Host, HostModel>();

/** Did a wait target that ended at `w` end while the call [start, end] ran (clocks agree to CLOCK_SLACK_NS)? */
function inWindow(w: number, start: number, end: number): boolean {
  return w >= start - CLOCK_SLACK_NS && w <= end + CLOCK_SLACK_NS;
}

/** The host model of a recording (cached per Host). */
export function hostModel(trace: Trace, host: Host): HostModel {
  let m = models.get(host);
  if (!m) models.set(host, (m = buildHostModel(trace, host)));
  return m;
}

function buildHostModel(trace: Trace, host: Host): HostModel {
  const { ops } = trace;
  const { calls } = host;
  const n = ops.length;
  const nc = calls.length;

  // Dense devices, streams and contexts. Row ids are small integers, so
  // lookup tables replace a Map lookup per op (10 M ops: seconds).
  const devIndex = new Map<number, number>();
  for (const d of trace.devices) devIndex.set(d.id, devIndex.size);
  const devOf = new Int32Array(n);
  const devLookup = new SmallIntMap();
  for (const [id, d] of devIndex) devLookup.set(id, d);
  const streamRow = new Map(trace.streams.map((s) => [s.id, s]));
  const streamLookup = new SmallIntMap();
  const streamIds: number[] = [];
  const streamPid: number[] = [];
  const ctxOfStreamList: number[] = [];
  for (const s of trace.streams) { streamLookup.set(s.id, streamIds.length); streamIds.push(s.id); streamPid.push(s.pid); ctxOfStreamList.push(-1); }
  const streamOfOp = new Int32Array(n);
  const ctxIndex = new Map<number, number>();
  const ctxPid: number[] = [];
  const ctxOfOp = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    let d = devLookup.get(ops.device[i]!);
    if (d < 0) { devIndex.set(ops.device[i]!, (d = devIndex.size)); devLookup.set(ops.device[i]!, d); }
    devOf[i] = d;
    let st = streamLookup.get(ops.stream[i]!);
    if (st < 0) { streamLookup.set(ops.stream[i]!, (st = streamIds.length)); streamIds.push(ops.stream[i]!); streamPid.push(ops.pid[i]!); ctxOfStreamList.push(-1); }
    streamOfOp[i] = st;
    let c = ctxOfStreamList[st]!;
    if (c < 0) {
      // Unknown stream: one context per process and device.
      const key = streamRow.get(ops.stream[i]!)?.contextId ?? 1e9 + ops.pid[i]! * 1024 + d;
      c = ctxIndex.get(key) ?? -1;
      if (c < 0) { ctxIndex.set(key, (c = ctxIndex.size)); ctxPid.push(ops.pid[i]!); }
      ctxOfStreamList[st] = c;
    }
    ctxOfOp[i] = c;
  }
  for (const s of trace.streams) {
    if (!ctxIndex.has(s.contextId)) {
      ctxIndex.set(s.contextId, ctxIndex.size);
      ctxPid.push(s.pid);
    }
  }
  const contexts = ctxIndex.size;

  // Calls in start order (the native loader returns them by id, which is
  // start order per thread; check globally and sort only if needed).
  let sorted = true;
  for (let k = 1; k < nc; k++) if (calls.start[k]! < calls.start[k - 1]!) { sorted = false; break; }
  let callOrder: Int32Array;
  if (sorted) {
    callOrder = new Int32Array(nc);
    for (let k = 0; k < nc; k++) callOrder[k] = k;
  } else {
    callOrder = Int32Array.from({ length: nc }, (_, k) => k).sort((a, b) => calls.start[a]! - calls.start[b]! || a - b);
  }

  // Ops per call (CSR), in op order (= start order).
  const firstOp = new Int32Array(nc + 1);
  for (let i = 0; i < n; i++) { const k = host.opCall[i]!; if (k >= 0) firstOp[k + 1]!++; }
  for (let k = 0; k < nc; k++) firstOp[k + 1]! += firstOp[k]!;
  const callOps = new Int32Array(firstOp[nc]!);
  {
    const fill = firstOp.slice(0, nc);
    for (let i = 0; i < n; i++) { const k = host.opCall[i]!; if (k >= 0) callOps[fill[k]!++] = i; }
  }

  // Threads: dense index per call.
  const threadCalls = [...host.threads.values()];
  const threadOf = new Int32Array(nc);
  for (let t = 0; t < threadCalls.length; t++) { const list = threadCalls[t]!; for (let j = 0; j < list.length; j++) threadOf[list[j]!] = t; }

  // Outermost call of each call (driver calls inside runtime calls).
  const outer = new Int32Array(nc);
  for (const list of threadCalls) {
    let o = -1;
    for (let j = 0; j < list.length; j++) {
      const k = list[j]!;
      if (o >= 0 && calls.start[k]! < calls.end[o]!) outer[k] = o;
      else outer[(o = k)] = k;
    }
  }

  // Name classes, once per name.
  const classOfName = new SmallIntMap();
  for (const [id, name] of host.names) classOfName.set(id, nameClass(name));

  // Streams and contexts by process; event records and waits by call.
  const streamsOfPid = new Map<number, number[]>();
  streamPid.forEach((p, st) => { const l = streamsOfPid.get(p) ?? []; l.push(st); streamsOfPid.set(p, l); });
  const ctxsOfPid = new Map<number, number[]>();
  ctxPid.forEach((p, c) => { const l = ctxsOfPid.get(p) ?? []; l.push(c); ctxsOfPid.set(p, l); });
  const hasEvent = new Uint8Array(nc);
  const recordsAt = new Map<number, { pid: number; eventId: number; stream: number | null }[]>();
  for (const e of host.events) if (e.call >= 0) { hasEvent[e.call] = 1; (recordsAt.get(e.call) ?? recordsAt.set(e.call, []).get(e.call)!).push(e); }
  const waitsAt = new Map<number, { pid: number; eventId: number | null; stream: number | null }[]>();
  for (const w of host.waits) if (w.call >= 0) { hasEvent[w.call] = 1; (waitsAt.get(w.call) ?? waitsAt.set(w.call, []).get(w.call)!).push(w); }

  // The walk in issue order: calls by start, ops without a call merged in
  // by their own start.
  const order = new Int32Array(n);
  const callPos = new Int32Array(nc);
  const waitKind = new Uint8Array(nc);
  const waitArg = new Int32Array(nc);
  const waitCtx = new Int32Array(nc).fill(-1);
  const cost = new Float64Array(nc);
  const waitsOwn = new Uint8Array(nc);
  const lastOfStream = new Int32Array(streamIds.length).fill(-1);
  const ctxCount = new Int32Array(contexts);
  const ctxMaxEnd = new Float64Array(contexts).fill(-Infinity);
  const threadStream = new Int32Array(threadCalls.length).fill(-1);
  const threadCtx = new Int32Array(threadCalls.length).fill(-1);
  const captured = new Map<string, number>(); // `${pid}:${eventId}` → op
  const eventOps: HostModel['eventOps'] = [];
  // Per op: when what it depended on ended in the recording (its stream's
  // previous op, an awaited event, the legacy barrier): for measuring the
  // GPU's latencies (measureLatencies).
  const depEnd = new Float64Array(n).fill(-Infinity);
  const flagsOf = new Int32Array(streamIds.length);
  streamIds.forEach((id, x) => { flagsOf[x] = streamRow.get(id)?.flags ?? 0; });
  const waitEnd = new Float64Array(streamIds.length).fill(-Infinity);
  const blockingMaxEnd = new Float64Array(contexts).fill(-Infinity);
  const legacyEnd = new Float64Array(contexts).fill(-Infinity);
  let pos = 0;
  let loose = 0; // next op index to look at for ops without a call
  const emit = (i: number, t: number) => {
    order[pos++] = i;
    const s = streamOfOp[i]!;
    const c = ctxOfOp[i]!;
    let dep = Math.max(lastOfStream[s]! >= 0 ? ops.end[lastOfStream[s]!]! : -Infinity, waitEnd[s]!);
    waitEnd[s] = -Infinity;
    if (flagsOf[s]! & 1) { dep = Math.max(dep, blockingMaxEnd[c]!); legacyEnd[c] = ops.end[i]!; }
    else if (!(flagsOf[s]! & 3)) { dep = Math.max(dep, legacyEnd[c]!); blockingMaxEnd[c] = Math.max(blockingMaxEnd[c]!, ops.end[i]!); }
    depEnd[i] = dep;
    lastOfStream[s] = i;
    ctxCount[c]!++;
    if (ops.end[i]! > ctxMaxEnd[c]!) ctxMaxEnd[c] = ops.end[i]!;
    if (t >= 0) { threadStream[t] = s; threadCtx[t] = c; }
  };
  const emitLooseBefore = (time: number) => {
    while (loose < n && (host.opCall[loose]! >= 0 || ops.start[loose]! < time)) {
      if (host.opCall[loose]! < 0) emit(loose, -1);
      loose++;
    }
  };

  for (let r = 0; r < nc; r++) {
    const k = callOrder[r]!;
    emitLooseBefore(calls.start[k]!);
    callPos[k] = pos;
    const t = threadOf[k]!;
    const pid = calls.pid[k]!;
    // Event records and waits: positions for the replay's own walk.
    if (hasEvent[k]) for (const e of recordsAt.get(k) ?? []) {
      if (e.stream === null) continue;
      const key = `${e.pid}:${e.eventId}`;
      eventOps.push({ pos, wait: false, stream: e.stream, key });
      const s = streamLookup.get(e.stream);
      captured.set(key, s < 0 ? -1 : lastOfStream[s]!);
    }
    if (hasEvent[k]) for (const w of waitsAt.get(k) ?? []) {
      if (w.stream === null || w.eventId === null) continue;
      const key = `${w.pid}:${w.eventId}`;
      eventOps.push({ pos, wait: true, stream: w.stream, key });
      const s = streamLookup.get(w.stream);
      const c = captured.get(key);
      if (s >= 0 && c !== undefined && c >= 0) waitEnd[s] = Math.max(waitEnd[s]!, ops.end[c]!);
    }
    // Its own ops.
    let blockingOwn = -1;
    for (let j = firstOp[k]!; j < firstOp[k + 1]!; j++) {
      const i = callOps[j]!;
      emit(i, t);
      if (ops.isAsync[i] === 0 || isPageableCopy(trace, i)) blockingOwn = i;
    }
    if (outer[k] !== k) continue; // nested calls are part of their outer call's time
    let kind: number = WaitKind.None;
    let target = -1;
    let ctx = -1;
    let waitedUntil = -Infinity;
    if (blockingOwn >= 0) {
      kind = WaitKind.Op;
      target = blockingOwn;
      waitsOwn[k] = 1;
      for (let j = firstOp[k]!; j < firstOp[k + 1]!; j++) waitedUntil = Math.max(waitedUntil, ops.end[callOps[j]!]!);
    } else {
      const cls = Math.max(NameClass.Other, classOfName.get(calls.nameId[k]!));
      if (cls === NameClass.Device || cls === NameClass.Implicit) {
        // Its context: the one of this process whose issued work completed
        // inside the call, latest first; else the thread's current one.
        let best = -1;
        for (const c of ctxsOfPid.get(pid) ?? []) {
          if (ctxCount[c]! > 0 && inWindow(ctxMaxEnd[c]!, calls.start[k]!, calls.end[k]!) && (best < 0 || ctxMaxEnd[c]! > ctxMaxEnd[best]!)) best = c;
        }
        if (best < 0 && cls === NameClass.Device) best = threadCtx[t]!;
        if (best >= 0) {
          kind = WaitKind.Prefix;
          ctx = best;
          target = ctxCount[best]!;
          waitedUntil = ctxMaxEnd[best]!;
        }
      } else if (cls === NameClass.Stream || cls === NameClass.Event) {
        // The op it waited for: the one (the last of a stream, or what an
        // event captured) that completed inside the call, latest first; else
        // the last op of the thread's current stream.
        // (No closure here: one capturing `k` would allocate per call.)
        let best = -1;
        const candidates = cls === NameClass.Stream
          ? (streamsOfPid.get(pid) ?? []).map((st) => lastOfStream[st]!)
          : [...captured].filter(([key]) => key.startsWith(`${pid}:`)).map(([, i]) => i);
        for (const i of candidates) if (i >= 0 && inWindow(ops.end[i]!, calls.start[k]!, calls.end[k]!) && (best < 0 || ops.end[i]! > ops.end[best]!)) best = i;
        if (best < 0 && threadStream[t]! >= 0) best = lastOfStream[threadStream[t]!]!;
        if (best >= 0) {
          kind = WaitKind.Op;
          target = best;
          waitedUntil = ops.end[best]!;
        }
      }
    }
    const s = calls.start[k]!;
    const e = calls.end[k]!;
    if (kind !== WaitKind.None && waitedUntil > e + CLOCK_SLACK_NS) kind = WaitKind.None; // it returned before: it did not wait for that
    waitKind[k] = kind;
    waitArg[k] = target;
    waitCtx[k] = ctx;
    // Non-waiting CPU time: what the call took after what it waited for completed.
    cost[k] = kind === WaitKind.None ? e - s : Math.max(MIN_CALL_COST_NS, e - Math.min(e, Math.max(s, waitedUntil)));
  }
  emitLooseBefore(Infinity);

  const overlap = oppositeOverlap(trace);
  const factors = duplexFactors(trace, overlap);
  const duplex = new Float64Array(devIndex.size * 2).fill(1);
  for (const [id, d] of devIndex) {
    const f = factors.get(id) ?? DEFAULT_DUPLEX;
    duplex[d * 2] = f.HtoD;
    duplex[d * 2 + 1] = f.DtoH;
  }
  return {
    work: uncontendedDurations(trace, factors, overlap), duplex,
    order, callPos, ctxOfOp, contexts, ctxIndex, waitKind, waitArg, waitCtx, cost, outer, waitsOwn,
    latency: measureLatencies(trace, host, devIndex, devOf, waitsOwn, depEnd), devIndex, devOf, eventOps, threadCalls,
  };
}

/** Latencies the GPU adds, measured from the recording (ns), per dense device. */
export interface Latencies {
  /** After the issuing call returns, per device × op kind (index dev * 4 + kind). */
  launch: Float64Array;
  /** After the op it waited for (its stream's previous op, an event, the legacy barrier) ends, per device × op kind. */
  dependency: Float64Array;
  /** Between two copies of one engine when the second was queued, per device × engine (0 HtoD or shared, 1 DtoH). */
  engine: Float64Array;
  /** Between two copies of one engine on the same stream (per device × engine): the engine goes on with the stream's next copy. */
  chain: Float64Array;
}

/**
 * The GPU's own latencies, each the median over the ops of the recording
 * where that latency alone decided the start:
 *  * launch: op.start − call.end for ops that waited for nothing (they
 *    started more than 1 µs after their stream's previous op and the
 *    previous copy of their direction ended; their call did not block on
 *    them). On the H100 fixtures copies start ~2 µs after cudaMemcpyAsync
 *    returns, kernels ~0–1 µs after cudaLaunchKernel. Measured from the
 *    call's end, not its start: the call's own CPU time varies 3–55 µs, the
 *    lag after it returns hardly at all.
 *  * dependency: op.start − end of its stream's previous op, for ops issued
 *    before that op ended (9–11 µs between a copy and a kernel on an H100);
 *  * engine: gap between two same-direction copies of different streams
 *    when the second was queued behind the first (~2–8 µs);
 *  * chain: the same for two copies of one stream (~1.4 µs). The engine
 *    goes on with the stream's next copy before it serves other streams'
 *    queued copies (seen in every multi-copy fixture: matmul's two input
 *    copies of a chunk run back to back although the next chunk's copy
 *    was already waiting), so the replay hands the engine over directly.
 * Without them the replay of the unchanged fixtures came out 1–7% short.
 * Where a recording has no such sample (a serial run never queues a copy
 * behind another stream's), the value measured on the H100 fixtures
 * (DEFAULT_LATENCY): a fix can create the situation the recording lacked —
 * moving default-stream work makes copies of eight streams queue — and
 * leaving it at 0 made those predictions 3–4% short.
 */
/** The H100 fixtures' latencies (concurrent runs, ns): for recordings that cannot show one. */
export const DEFAULT_LATENCY = {
  /** Kernel after a copy, copy after a kernel (normalise / matmul / transpose concurrent: 5–9 µs, 2–12 µs). */
  dependency: { kernel: 6_000, copy: 7_000, memset: 0 },
  /** Copy of another stream queued behind a copy: HtoD ~1.9 µs, DtoH ~7.5 µs. */
  engine: { HtoD: 2_000, DtoH: 7_500 },
  /** Next copy of the same stream on the same engine: ~1.4 µs. */
  chain: 1_400,
};

function measureLatencies(trace: Trace, host: Host, devIndex: Map<number, number>, devOf: Int32Array, waitsOwn: Uint8Array, depEnd: Float64Array): Latencies {
  const { ops } = trace;
  const { calls } = host;
  const D = devIndex.size;
  const launch: number[][] = Array.from({ length: D * 4 }, () => []);
  const dependency: number[][] = Array.from({ length: D * 4 }, () => []);
  const engine: number[][] = Array.from({ length: D * 2 }, () => []);
  const chain: number[][] = Array.from({ length: D * 2 }, () => []);
  const all: number[][] = Array.from({ length: D }, () => []);
  const engineStream = new Int32Array(D * 2).fill(-1);
  const shared = new Uint8Array(D);
  for (const x of trace.devices) shared[devIndex.get(x.id)!] = (x.asyncEngineCount ?? 2) <= 1 ? 1 : 0;
  // A sample of each latency is plenty: keep the first SAMPLES of each kind.
  const SAMPLES = 10_000;
  const add = (l: number[], v: number) => { if (l.length < SAMPLES) l.push(v); };
  const engineEnd = new Float64Array(D * 2).fill(-Infinity);
  for (let i = 0; i < ops.length; i++) {
    const k = host.opCall[i]!;
    const d = devOf[i]!;
    const cat = ops.category[i]!;
    const kind = ops.kind[i]!;
    const eng = kind === MEMCPY && (cat === HTOD || cat === DTOH) ? d * 2 + (shared[d] || cat === HTOD ? 0 : 1) : -1;
    const dep = depEnd[i]!;
    const busy = eng >= 0 ? engineEnd[eng]! : -Infinity;
    if (k >= 0 && !waitsOwn[k]) {
      const issued = calls.end[k]!;
      const start = ops.start[i]!;
      add(all[d]!, start - issued);
      // Only one thing decided the start: sample that latency.
      if (issued >= dep && issued >= busy) add(launch[d * 4 + kind]!, start - issued);
      else if (eng >= 0 && busy === dep && engineStream[eng] === ops.stream[i] && dep > issued + 1_000 && start >= dep && start - dep < 100_000) add(chain[eng]!, start - dep);
      else if (dep > issued + 1_000 && dep >= busy && start >= dep && start - dep < 100_000) add(dependency[d * 4 + kind]!, start - dep);
      else if (busy > issued + 1_000 && busy > dep && start >= busy && start - busy < 100_000) add(engine[eng]!, start - busy);
    }
    if (eng >= 0) { engineEnd[eng] = Math.max(busy, ops.end[i]!); engineStream[eng] = ops.stream[i]!; }
  }
  const quantile = (l: number[], q: number) => { l.sort((a, b) => a - b); return l[Math.floor((l.length - 1) * q)]!; };
  const out: Latencies = { launch: new Float64Array(D * 4), dependency: new Float64Array(D * 4), engine: new Float64Array(D * 2), chain: new Float64Array(D * 2) };
  for (let d = 0; d < D; d++) {
    // A kind without a clean sample: the device's other clean launches, else
    // the 10th percentile of all its launch lags (the ops that waited least).
    const clean = [1, 2, 3].flatMap((kind) => launch[d * 4 + kind]!);
    const fallback = clean.length ? quantile(clean, 0.5) : all[d]!.length ? quantile(all[d]!, 0.1) : 0;
    for (let kind = 0; kind < 4; kind++) {
      const l = launch[d * 4 + kind]!;
      out.launch[d * 4 + kind] = l.length ? quantile(l, 0.5) : fallback;
      const dl = dependency[d * 4 + kind]!;
      const fallbackDep = kind === KERNEL ? DEFAULT_LATENCY.dependency.kernel : kind === MEMCPY ? DEFAULT_LATENCY.dependency.copy : DEFAULT_LATENCY.dependency.memset;
      out.dependency[d * 4 + kind] = dl.length ? quantile(dl, 0.5) : fallbackDep;
    }
    for (let e = 0; e < 2; e++) {
      out.engine[d * 2 + e] = engine[d * 2 + e]!.length ? quantile(engine[d * 2 + e]!, 0.5) : e === 0 ? DEFAULT_LATENCY.engine.HtoD : DEFAULT_LATENCY.engine.DtoH;
      out.chain[d * 2 + e] = chain[d * 2 + e]!.length ? quantile(chain[d * 2 + e]!, 0.5) : DEFAULT_LATENCY.chain;
    }
  }
  return out;
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
  const { ops } = trace;
  const { calls } = host;
  const n = ops.length;
  const m = hostModel(trace, host);
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
  const sc = scratch(m, n);
  sc.inUse = true;
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
  sc.inUse = false;
  if (n === 0) return { start, end, makespanNs: 0, gpuSpanNs: 0, gpuStart: 0, gpuEnd: 0, firstIssue: 0, busy };
  return { start, end, makespanNs: ge - Math.min(firstIssue, gs), gpuSpanNs: ge - gs, gpuStart: gs, gpuEnd: ge, firstIssue, busy };
}
