// The host side of the what-if replay (replay.ts): what each of a
// recording's API calls waited for (a device sync for the work issued before
// it on its context, a stream or event sync for one operation, a blocking
// copy for itself), each call's own CPU time, each thread's calls, the order
// in which the operations were issued, event records and stream waits, the
// latencies the GPU adds (launch, dependency, copy engine, chained copies)
// and how long each copy would have taken without duplex contention, all
// measured from the recording once and kept per recording (replay.ts says
// what the model covers and what it does not).
import { StreamFlags } from '../../store/enums.ts';
import { blocksOnDevice, callFamily, syncScope } from '../../cuda/call-families.ts';
import type { Host } from '../host.ts';
import { OpCategory, OpKind, type Trace } from '../trace.ts';
import { DEFAULT_DUPLEX, uncontendedWork } from '../bandwidth.ts';
import { denseIndicesNatively, issueWalkNatively, latencySamplesNatively, outermostCallsNatively, type CallIndexColumns } from '../../native/addon.ts';

// Enum values as module constants: the hot loops read them per op, and a test
// runner that rewrites imports into property reads (vitest) made each read a
// lookup on the imported module's namespace.
const KERNEL = OpKind.Kernel;
const MEMCPY = OpKind.Memcpy;
const HTOD = OpCategory.HtoD;
const DTOH = OpCategory.DtoH;

/** streams.flags bit of the legacy default stream. */
export const LEGACY_STREAM = StreamFlags.LegacyDefault;
/**
 * streams.flags bits of the streams that do not synchronize with the legacy
 * default stream: itself, and non-blocking streams. Every other stream is
 * blocking, per-thread default streams included: the legacy stream's
 * implicit barrier is between it and them.
 */
export const NOT_BLOCKING = StreamFlags.LegacyDefault | StreamFlags.NonBlocking;

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
  /**
   * Per call: WaitKind, its argument (op index, or ops of the context to
   * wait for), the context (a Prefix wait's). 0 where the call waits for
   * nothing, or has no context: only the calls that wait are written, so
   * that the pages of the others are never touched (10 M calls: 80 MB).
   */
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
  /**
   * Streams as the recording ran them (the replay's graph reuses them where
   * a fix moves no op and changes no flags): per op its dense stream (the
   * streams table's rows first, then the streams only ops name, in order
   * of first sight); per dense stream its streams.flags (0 for one not in
   * the table); streams.id → dense index (-1: none); and whether any op
   * runs on a legacy default stream.
   */
  opStream: Int32Array;
  streamFlags: Int32Array;
  streamIndex: { get(id: number): number };
  legacyOps: boolean;
  /**
   * Each CUDA event record (wait false) and stream wait (wait true) that
   * names a stream, in issue order: `pos`, the ops issued before its call
   * in `order`; `stream`, streams.id; `key`, `${pid}:${eventId}`; `call`,
   * the recording or waiting call's index (the dependency view names it).
   */
  eventOps: { pos: number; wait: boolean; stream: number; key: string; call: number }[];
  /** The calls of each thread, in start order (host.threads' values): a thread's index is its position here. */
  threadCalls: Int32Array[];
  /**
   * Per outer call: the call of another thread of its process whose end
   * let it start (a handoff, inferHandoffs), or -1; read only where
   * `handoffs` is true (a recording of one thread per process has none).
   */
  handoff: Int32Array;
  handoffs: boolean;
}

/** A blocked call's tail (wake-up and return) is never modelled as shorter than this. */
const MIN_CALL_COST_NS = 1_000;
/** CPU and GPU clocks agree to a few µs: a wait target may end this much after the call. */
const CLOCK_SLACK_NS = 5_000;

/** What a call may wait for, by its name (nameClass); native/addon/src/trace_codes.h repeats the codes. */
export const NameClass = { Other: 0, Device: 1, Stream: 2, Event: 3, Implicit: 4 } as const;
const CLASS_OF_SCOPE = { device: NameClass.Device, stream: NameClass.Stream, event: NameClass.Event } as const;

/**
 * What a call may wait for, by name (call-families.ts): a synchronize call
 * for its scope; an allocation or registration call for the device, as an
 * implicit synchronization, only counted where the recording shows a wait
 * (buildHostModel).
 */
function nameClass(name: string): number {
  const scope = syncScope(name);
  if (scope) return CLASS_OF_SCOPE[scope];
  return blocksOnDevice(callFamily(name)) ? NameClass.Implicit : NameClass.Other;
}

/** A copy's host memory kind (ops.detail: src * 16 + dst) when it is pageable. */
export const PAGEABLE = 1;
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

/** The host model of a recording (cached per Host). */
export function hostModel(trace: Trace, host: Host): HostModel {
  let m = models.get(host);
  if (!m) models.set(host, (m = buildHostModel(trace, host)));
  return m;
}

/**
 * The outermost call containing each call (HostModel.outer), cached per
 * Host: the rules read it (the copy idioms, copy-idioms.ts), and it is one
 * pass over the calls, where the rest of the model is the what-ifs' own
 * (~1 s at 10 M calls, built after the rules have listed their findings).
 */
export function outerCalls(host: Host): Int32Array {
  let outer = outers.get(host);
  if (!outer) {
    // Another thread's, where one was promised (givenOuterCalls) and comes: the same array, over shared memory.
    const given = promised.get(host)?.();
    promised.delete(host);
    outer = given && given.length === host.calls.length ? given : outermostCalls(host.calls, [...host.threads.values()]);
    outers.set(host, outer);
  }
  return outer;
}
const outers = new WeakMap<Host, Int32Array>();
const promised = new WeakMap<Host, () => Int32Array | null>();

/**
 * The outermost calls of `host` as another thread made them (whatif-thread.ts: the analysing thread's, for the what-if
 * thread's host model), taken when first needed: `take` returns them, or null where they did not come (made here then).
 */
export function givenOuterCalls(host: Host, take: () => Int32Array | null): void {
  promised.set(host, take);
}

/**
 * The outermost calls of `calls` over shared memory, to hand to another thread: made from their call index (its
 * threads' calls, indexCalls), before any Host of them is built.
 */
export function sharedOuterCalls(calls: Host['calls'], index: CallIndexColumns): Int32Array {
  const threads = Array.from(index.threadEnds, (end, t) => index.threadCalls.subarray(t > 0 ? index.threadEnds[t - 1]! : 0, end));
  return outermostCalls(calls, threads, true);
}

function buildHostModel(trace: Trace, host: Host): HostModel {
  const { calls } = host;
  const dense = denseIndices(trace);
  const callOrder = callStartOrder(calls);
  const byCall = opsByCall(host.opCall, trace.ops.length, calls.length, callOrder, host.opCallOrder);
  const threadCalls = [...host.threads.values()];
  const outer = outerCalls(host);
  const walk = issueWalk(trace, host, dense, callOrder, byCall, threadCalls, outer);
  // The latencies first: the overlaps are then written over the ops'
  // dependency ends, and the durations alone over the overlaps, each
  // needed no longer (160 MB less per 10 M ops, and their page faults).
  const latency = measureLatencies(trace, host, dense.devIndex, dense.devOf, walk.waitsOwn, walk.depEnd);
  const { work, duplex } = deviceWork(trace, dense.devIndex, walk.depEnd, dense.streamOfOp, dense.streamPid.length);
  const handoff = inferHandoffs(calls, threadCalls, outer);
  return {
    handoff: handoff ?? new Int32Array(0),
    handoffs: handoff !== null,
    work,
    duplex,
    order: walk.order,
    callPos: walk.callPos,
    ctxOfOp: dense.ctxOfOp,
    contexts: dense.ctxIndex.size,
    ctxIndex: dense.ctxIndex,
    waitKind: walk.waitKind,
    waitArg: walk.waitArg,
    waitCtx: walk.waitCtx,
    cost: walk.cost,
    outer,
    waitsOwn: walk.waitsOwn,
    latency,
    devIndex: dense.devIndex,
    devOf: dense.devOf,
    opStream: dense.streamOfOp,
    streamFlags: dense.streamFlags,
    streamIndex: dense.streamLookup,
    legacyOps: legacyOpsIn(walk.lastOfStream, dense.streamFlags),
    eventOps: walk.eventOps,
    threadCalls,
  };
}

/** Dense indexes of a recording's devices, streams and contexts, and each op's. */
interface DenseIndex {
  /** devices.id → dense device (the table's, then those only ops name); per op its dense device. */
  devIndex: Map<number, number>;
  devOf: Int32Array;
  /** streams.id → dense stream (the table's rows, then streams only ops name, in order of first sight); per op its dense stream. */
  streamLookup: SmallIntMap;
  streamOfOp: Int32Array;
  /** Per dense stream: its process and its streams.flags (0 for one not in the table). */
  streamPid: number[];
  streamFlags: Int32Array;
  /** contexts.id (or a synthetic key for a stream not in the table) → dense context; per dense context its process; per op its dense context. */
  ctxIndex: Map<number, number>;
  ctxPid: number[];
  ctxOfOp: Int32Array;
}

/**
 * The dense indexes, in one pass over the ops. Row ids are small integers,
 * so lookup tables replace a Map lookup per op (10 M ops: seconds). An op
 * on a stream the table lacks gets one context per process and device.
 */
function denseIndices(trace: Trace): DenseIndex {
  const { ops } = trace;
  const n = ops.length;
  const devIndex = new Map<number, number>();
  for (const d of trace.devices) devIndex.set(d.id, devIndex.size);
  const devOf = new Int32Array(n);
  const streamOfOp = new Int32Array(n);
  const ctxOfOp = new Int32Array(n);
  const streamRow = new Map(trace.streams.map((s) => [s.id, s]));
  // The pass over every op, native (native/addon/src/dense_indices.cc: ~0.06 s of JavaScript at 10 M): the tables'
  // devices and streams numbered first, then those only ops name, in order of first sight.
  const found = denseIndicesNatively({
    ops: n,
    device: ops.device,
    stream: ops.stream,
    pid: ops.pid,
    tableDevices: Float64Array.from(devIndex.keys()),
    tableDeviceIndex: Float64Array.from(devIndex.values()),
    tableStreams: Float64Array.from(trace.streams, (s) => s.id),
    // The context of a stream's row (of its id's last row, as the Map keeps it); NaN: none, one per process and device.
    tableStreamContext: Float64Array.from(trace.streams, (s) => streamRow.get(s.id)!.contextId ?? NaN),
    devOf,
    streamOfOp,
    ctxOfOp,
  });
  for (const id of found.devices) devIndex.set(id, devIndex.size);
  const streamLookup = new SmallIntMap();
  const streamIds: number[] = [];
  const streamPid: number[] = [];
  for (const s of trace.streams) {
    streamLookup.set(s.id, streamIds.length);
    streamIds.push(s.id);
    streamPid.push(s.pid);
  }
  found.streams.forEach((id, k) => {
    streamLookup.set(id, streamIds.length);
    streamIds.push(id);
    streamPid.push(found.streamPids[k]!);
  });
  const ctxIndex = new Map<number, number>();
  const ctxPid: number[] = [];
  found.contexts.forEach((key, k) => {
    ctxIndex.set(key, ctxIndex.size);
    ctxPid.push(found.contextPids[k]!);
  });
  for (const s of trace.streams) {
    if (!ctxIndex.has(s.contextId)) {
      ctxIndex.set(s.contextId, ctxIndex.size);
      ctxPid.push(s.pid);
    }
  }
  const streamFlags = new Int32Array(streamIds.length);
  streamIds.forEach((id, x) => {
    streamFlags[x] = streamRow.get(id)?.flags ?? 0;
  });
  return { devIndex, devOf, streamLookup, streamOfOp, streamPid, streamFlags, ctxIndex, ctxPid, ctxOfOp };
}

/**
 * Calls in start order. The native loader returns them by id, which is
 * start order per thread: checked globally and sorted only if needed. Null:
 * in index order, the usual case, without a 10 M-entry identity array.
 */
function callStartOrder(calls: Host['calls']): Int32Array | null {
  const { start, length: nc } = calls;
  for (let k = 1; k < nc; k++) if (start[k]! < start[k - 1]!) return byStart(start, nc);
  return null;
}

/**
 * The calls' indexes sorted by start (ties by index). A function of its own: the comparator, a closure over `start`
 * in callStartOrder, made V8 keep `start` in a context object, and the check's loop over 10 M calls ran 33 ms on the
 * what-if thread rather than 14.
 */
function byStart(start: Float64Array, nc: number): Int32Array {
  return Int32Array.from({ length: nc }, (_, x) => x).sort((a, b) => start[a]! - start[b]! || a - b);
}

/**
 * The ops of each call. Where every op has a call, the ops come in their
 * calls' order (a program whose ops start in the order it issued them) and
 * the calls are walked in index order, each call's ops are the next ones: a
 * cursor finds them (firstOp null), no array of the calls. Else CSR, in op
 * order (= start order): call k's are callOps[firstOp[k] .. firstOp[k + 1]);
 * null callOps: op j itself, where every op has a call and the ops come in
 * their calls' order (no copy of the identity).
 */
interface OpsByCall {
  firstOp: Int32Array | null;
  callOps: Int32Array | null;
  /** How many ops have a call. */
  withCall: number;
}

function opsByCall(opCall: Int32Array, n: number, nc: number, callOrder: Int32Array | null, known?: Host['opCallOrder']): OpsByCall {
  // Where the call index counted them (hostOf), as it found each op's call: this pass over 10 M ops took ~20 ms of the
  // what-if thread's path.
  let inCallOrder = true;
  let withCall = 0;
  if (known) ({ inCallOrder, withCall } = known);
  else
    for (let i = 0, prev = -1; i < n; i++) {
      const k = opCall[i]!;
      if (k < 0) continue;
      withCall++;
      if (k < prev) inCallOrder = false;
      prev = k;
    }
  let firstOp: Int32Array | null = null;
  let callOps: Int32Array | null = null;
  if (!inCallOrder || withCall < n || callOrder !== null) {
    firstOp = new Int32Array(nc + 1);
    for (let i = 0; i < n; i++) if (opCall[i]! >= 0) firstOp[opCall[i]! + 1]!++;
    for (let k = 0; k < nc; k++) firstOp[k + 1]! += firstOp[k]!;
    if (!inCallOrder || withCall < n) {
      callOps = new Int32Array(firstOp[nc]!);
      const fill = firstOp.slice(0, nc);
      for (let i = 0; i < n; i++) {
        const k = opCall[i]!;
        if (k >= 0) callOps[fill[k]!++] = i;
      }
    }
  }
  return { firstOp, callOps, withCall };
}

/** The outermost call containing each call (driver calls inside runtime calls): itself if outermost (native: call_index.cc). */
function outermostCalls(calls: Host['calls'], threadCalls: Int32Array[], shared = false): Int32Array {
  const outer = shared ? new Int32Array(new SharedArrayBuffer(4 * calls.length)) : new Int32Array(calls.length);
  outermostCallsNatively(calls, threadCalls, outer);
  return outer;
}

/** Each thread's dense index per call; null where there is one thread, every call's. */
function threadIndexOf(threadCalls: Int32Array[], nc: number): Int32Array | null {
  if (threadCalls.length === 1) return null;
  const threadOf = new Int32Array(nc);
  for (let t = 0; t < threadCalls.length; t++) {
    const list = threadCalls[t]!;
    for (let j = 0; j < list.length; j++) threadOf[list[j]!] = t;
  }
  return threadOf;
}

/** What the walk in issue order writes (native/addon/src/issue_walk.cc): HostModel's fields, and depEnd for measureLatencies. */
interface Walked {
  order: Int32Array;
  callPos: Int32Array;
  waitKind: Uint8Array;
  waitArg: Int32Array;
  waitCtx: Int32Array;
  cost: Float64Array;
  waitsOwn: Uint8Array;
  eventOps: HostModel['eventOps'];
  /**
   * Per op: when what it depended on ended in the recording (its stream's
   * previous op, an awaited event, the legacy barrier): for measuring the
   * GPU's latencies (measureLatencies).
   */
  depEnd: Float64Array;
  /** Per dense stream: its last op (-1: none). */
  lastOfStream: Int32Array;
}

/**
 * The walk in issue order (native: issue_walk.cc), over the calls by start
 * with the ops without a call merged in by their own start: it issues each
 * op (its place in `order`, when what it depended on ended in the
 * recording) and infers what each outer call waited for and its CPU time
 * without the wait — its own blocking copy, else what its name synchronizes
 * (a context, a stream, an event) if that completed while it ran. Here:
 * what it reads, as arrays (each name's class, the event records and waits
 * that name a stream), and the event ops it lists back as objects.
 */
function issueWalk(
  trace: Trace,
  host: Host,
  dense: DenseIndex,
  callOrder: Int32Array | null,
  byCall: OpsByCall,
  threadCalls: Int32Array[],
  outer: Int32Array,
): Walked {
  const { ops } = trace;
  const { calls } = host;
  const n = ops.length;
  const nc = calls.length;
  const streams = dense.streamFlags.length;
  const nameIds = Int32Array.from(host.names.keys());
  const nameClasses = Uint8Array.from(host.names.values(), nameClass);
  // The records and waits the walk follows: of a call, naming a stream (a wait, an event too).
  const records = host.events.filter((e) => e.call >= 0 && e.stream !== null);
  const waits = host.waits.filter((w) => w.call >= 0 && w.stream !== null && w.eventId !== null);
  const streamOf = (id: number | null) => dense.streamLookup.get(id!);
  const out = {
    order: new Int32Array(n),
    callPos: new Int32Array(nc),
    waitKind: new Uint8Array(nc),
    waitArg: new Int32Array(nc),
    waitCtx: new Int32Array(nc),
    cost: new Float64Array(nc),
    waitsOwn: new Uint8Array(nc),
    depEnd: new Float64Array(n),
    lastOfStream: new Int32Array(streams),
    eventPos: new Int32Array(records.length + waits.length),
    eventSeq: new Int32Array(records.length + waits.length),
  };
  issueWalkNatively({
    ops: n,
    calls: nc,
    streams,
    contexts: dense.ctxIndex.size,
    threads: threadCalls.length,
    allOpsHaveCalls: byCall.withCall === n ? 1 : 0,
    legacyFlag: LEGACY_STREAM,
    notBlockingFlags: NOT_BLOCKING,
    minCallCostNs: MIN_CALL_COST_NS,
    clockSlackNs: CLOCK_SLACK_NS,
    opStart: ops.start,
    opEnd: ops.end,
    isAsync: ops.isAsync,
    kind: ops.kind,
    category: ops.category,
    detail: ops.detail,
    opCall: host.opCall,
    streamOfOp: dense.streamOfOp,
    ctxOfOp: dense.ctxOfOp,
    streamFlags: dense.streamFlags,
    streamPid: Int32Array.from(dense.streamPid),
    ctxPid: Int32Array.from(dense.ctxPid),
    callStart: calls.start,
    callEnd: calls.end,
    callPid: calls.pid,
    callName: calls.nameId,
    nameIds,
    nameClasses,
    callOrder,
    firstOp: byCall.firstOp,
    callOps: byCall.callOps,
    threadOf: threadIndexOf(threadCalls, nc),
    outer,
    recordCall: Int32Array.from(records, (e) => e.call),
    recordPid: Int32Array.from(records, (e) => e.pid),
    recordStream: Int32Array.from(records, (e) => streamOf(e.stream)),
    recordEvent: Float64Array.from(records, (e) => e.eventId),
    waitCall: Int32Array.from(waits, (w) => w.call),
    waitPid: Int32Array.from(waits, (w) => w.pid),
    waitStream: Int32Array.from(waits, (w) => streamOf(w.stream)),
    waitEvent: Float64Array.from(waits, (w) => w.eventId!),
    ...out,
  });
  const eventOps: HostModel['eventOps'] = [];
  for (let q = 0; q < out.eventSeq.length; q++) {
    const x = out.eventSeq[q]!;
    const e = x < records.length ? records[x]! : waits[x - records.length]!;
    eventOps.push({ pos: out.eventPos[q]!, wait: x >= records.length, stream: e.stream!, key: `${e.pid}:${e.eventId}`, call: e.call });
  }
  return { ...out, eventOps };
}

/** Does any op run on a legacy default stream? The walk emitted every op: the streams with ops are those it left a last op. */
function legacyOpsIn(lastOfStream: Int32Array, streamFlags: Int32Array): boolean {
  for (let x = 0; x < streamFlags.length; x++) if (lastOfStream[x]! >= 0 && streamFlags[x]! & LEGACY_STREAM) return true;
  return false;
}

/**
 * Each op's work in the replay, its duration had it run alone (its duplex slowdown taken out: bandwidth.ts
 * uncontendedWork), and the duplex factor per dense device × engine (0 HtoD, 1 DtoH). The overlaps are written over
 * the ops' dependency ends (`depEnd`, read no more), and the work over the overlaps. A stream runs its operations one
 * after another, and so does the replay; where the recording shows one still running when the next on its stream
 * began (a CUDA graph's branches, launched on one stream, running side by side; a record whose end is off: the
 * corpus's torch-launch-bound-graphs fix has a 32 KiB device-to-device copy recorded as lasting the whole 37 ms loop
 * while 12,000 kernels ran on its stream), the replay would run the rest after it: the unchanged recording replayed in
 * 76 ms where it ran in 41, and every what-if of it predicting a slower run. Such an operation's work ends where the
 * next on its stream began (`streamOfOp`, dense stream indexes, `streams` of them), in the same native pass.
 */
function deviceWork(
  trace: Trace,
  devIndex: Map<number, number>,
  depEnd: Float64Array,
  streamOfOp: Int32Array,
  streams: number,
): { work: Float64Array; duplex: Float64Array } {
  const { work, factors } = uncontendedWork(trace, depEnd, { streamOf: streamOfOp, streams });
  const duplex = new Float64Array(devIndex.size * 2).fill(1);
  for (const [id, d] of devIndex) {
    const f = factors.get(id) ?? DEFAULT_DUPLEX;
    duplex[d * 2] = f.HtoD;
    duplex[d * 2 + 1] = f.DtoH;
  }
  return { work, duplex };
}

/** A thread idle this long between two calls may have been waiting for another thread. */
const HANDOFF_MIN_GAP_NS = 100_000;
/** The most a thread takes to start after the thread it waited for handed over: a wake-up and the interpreter's lock. */
const HANDOFF_MAX_LAG_NS = 300_000;

/**
 * Calls that started because another thread of their process handed over
 * to them, the cross-thread order the program enforces itself (replay.ts:
 * the host model keeps each thread's own time between calls, which for a
 * thread that was waiting is the other thread's time). PyTorch's training
 * step is the common case: the main thread launches the forward pass and
 * waits inside `loss.backward()` while the autograd engine's thread
 * launches the backward pass, then goes on with the optimizer step once
 * that thread is done. A call k of thread T after an idle gap of at least
 * HANDOFF_MIN_GAP_NS is a handoff from call j of thread U (same process)
 * when j is U's last call before k, ended at most `lag` before k began,
 * and U then stayed idle at least HANDOFF_MIN_GAP_NS itself: U stopped, T
 * started (lag = min(HANDOFF_MAX_LAG_NS, a quarter of T's gap)); of several
 * such threads, the one that ended last. How soon U took over after T went
 * idle does not count: the other side of a handoff often runs host code
 * first (the optimizer's Python before its first launch). Two threads
 * working side by side (a data loader's and a training loop's) rarely stop
 * and start in turn like that. Null where no process has two threads
 * making calls.
 */
export function inferHandoffs(calls: Host['calls'], threadCalls: Int32Array[], outer: Int32Array): Int32Array | null {
  // Null before anything is built where no process has two threads making
  // calls, the usual program: its outer-call lists and a per-call array of
  // 10 M calls cost ~0.1 s for nothing.
  const threadsOfPid = new Map<number, number>();
  let any = false;
  for (const list of threadCalls) {
    if (list.length === 0) continue;
    const pid = calls.pid[list[0]!]!;
    const n = (threadsOfPid.get(pid) ?? 0) + 1;
    threadsOfPid.set(pid, n);
    if (n >= 2) any = true;
  }
  if (!any) return null;
  // Each thread's outer calls (its own order: start order), and the threads of each process.
  const own: Int32Array[] = [];
  const byPid = new Map<number, number[]>();
  for (const list of threadCalls) {
    if (list.length === 0) continue;
    let n = 0;
    for (let j = 0; j < list.length; j++) if (outer[list[j]!] === list[j]) n++;
    const mine = new Int32Array(n);
    n = 0;
    for (let j = 0; j < list.length; j++) if (outer[list[j]!] === list[j]) mine[n++] = list[j]!;
    const pid = calls.pid[list[0]!]!;
    (byPid.get(pid) ?? byPid.set(pid, []).get(pid)!).push(own.length);
    own.push(mine);
  }
  // Per outer call of a process with two threads or more: its thread (index into `own`); -1 for the others.
  const threadOf = new Int32Array(calls.length).fill(-1);
  const peers = new Array<Int32Array>(own.length);
  for (const threads of byPid.values()) {
    if (threads.length < 2) continue;
    for (const t of threads) {
      peers[t] = Int32Array.from(threads);
      for (const k of own[t]!) threadOf[k] = t;
    }
  }
  let handoff: Int32Array | null = null;
  const { start, end } = calls;
  // One sweep over the calls in start order (their order in `calls`), a run of equal starts at a time,
  // keeping each thread's last outer call that started before the run: a candidate for every call of
  // the run, with its end where the thread then idled (-Infinity where it did not: never a handoff).
  // Each thread is then one look per call, where a search of every other thread's calls per call
  // took over a minute on ten million calls (64 threads).
  const seen = new Int32Array(own.length);
  const lastCall = new Int32Array(own.length).fill(-1);
  const lastEnd = new Float64Array(own.length).fill(-Infinity);
  for (let g = 0; g < calls.length;) {
    const s = start[g]!;
    let h = g;
    while (h < calls.length && start[h] === s) h++;
    for (let k = g; k < h; k++) {
      const t = threadOf[k]!;
      if (t < 0) continue;
      // Its thread's previous outer call: the last before the run, or one of the run before it (equal starts, in order).
      const mine = own[t]!;
      let x = seen[t]!;
      while (mine[x] !== k) x++;
      if (x === 0) continue;
      const gap = s - end[mine[x - 1]!]!;
      if (gap < HANDOFF_MIN_GAP_NS) continue;
      const lag = Math.min(HANDOFF_MAX_LAG_NS, gap / 4);
      // Another thread's last call before k ended before k, within lag, and that thread then idled; the latest such.
      let best = -1;
      let bestEnd = -Infinity;
      for (const u of peers[t]!) {
        const e = lastEnd[u]!;
        if (u === t || e > s || s - e > lag) continue;
        if (best < 0 || e > bestEnd) {
          best = lastCall[u]!;
          bestEnd = e;
        }
      }
      if (best >= 0) (handoff ??= new Int32Array(calls.length).fill(-1))[k] = best;
    }
    for (let k = g; k < h; k++) {
      const t = threadOf[k]!;
      if (t < 0) continue;
      const mine = own[t]!;
      const j = mine[seen[t]!]!;
      seen[t] = seen[t]! + 1;
      const next = seen[t]! < mine.length ? mine[seen[t]!]! : -1;
      lastCall[t] = j;
      lastEnd[t] = next >= 0 && start[next]! - end[j]! < HANDOFF_MIN_GAP_NS ? -Infinity : end[j]!;
    }
    g = h;
  }
  return handoff;
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

/** The H100 fixtures' latencies (concurrent runs, ns): for recordings that cannot show one. */
export const DEFAULT_LATENCY = {
  /** Kernel after a copy, copy after a kernel (normalise / matmul / transpose concurrent: 5–9 µs, 2–12 µs). */
  dependency: { kernel: 6_000, copy: 7_000, memset: 0 },
  /** Copy of another stream queued behind a copy: HtoD ~1.9 µs, DtoH ~7.5 µs. */
  engine: { HtoD: 2_000, DtoH: 7_500 },
  /** Next copy of the same stream on the same engine: ~1.4 µs. */
  chain: 1_400,
};

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
function measureLatencies(trace: Trace, host: Host, devIndex: Map<number, number>, devOf: Int32Array, waitsOwn: Uint8Array, depEnd: Float64Array): Latencies {
  const { ops } = trace;
  const D = devIndex.size;
  const sharedEngine = new Uint8Array(D);
  for (const x of trace.devices) sharedEngine[devIndex.get(x.id)!] = (x.asyncEngineCount ?? 2) <= 1 ? 1 : 0;
  // The pass over every op, native (native/addon/src/latency_samples.cc: ~0.11 s of JavaScript at 10 M); its medians here.
  const { launch, dependency, engine, chain, all } = latencySamplesNatively({
    ops: ops.length,
    calls: host.calls.length,
    devices: D,
    // A sample of each latency is plenty: the first 10,000 of each kind.
    samples: 10_000,
    clearNs: 1_000,
    withinNs: 100_000,
    kind: ops.kind,
    category: ops.category,
    start: ops.start,
    end: ops.end,
    stream: ops.stream,
    devOf,
    opCall: host.opCall,
    depEnd,
    callEnd: host.calls.end,
    waitsOwn,
    sharedEngine,
  });
  const quantile = (l: number[], q: number) => {
    l.sort((a, b) => a - b);
    return l[Math.floor((l.length - 1) * q)]!;
  };
  const out: Latencies = {
    launch: new Float64Array(D * 4),
    dependency: new Float64Array(D * 4),
    engine: new Float64Array(D * 2),
    chain: new Float64Array(D * 2),
  };
  for (let d = 0; d < D; d++) {
    // A kind without a clean sample: the device's other clean launches, else
    // the 10th percentile of all its launch lags (the ops that waited least).
    const clean = [1, 2, 3].flatMap((kind) => launch[d * 4 + kind]!);
    const fallback = clean.length ? quantile(clean, 0.5) : all[d]!.length ? quantile(all[d]!, 0.1) : 0;
    for (let kind = 0; kind < 4; kind++) {
      const l = launch[d * 4 + kind]!;
      out.launch[d * 4 + kind] = l.length ? quantile(l, 0.5) : fallback;
      const dl = dependency[d * 4 + kind]!;
      const fallbackDep =
        kind === KERNEL ? DEFAULT_LATENCY.dependency.kernel : kind === MEMCPY ? DEFAULT_LATENCY.dependency.copy : DEFAULT_LATENCY.dependency.memset;
      out.dependency[d * 4 + kind] = dl.length ? quantile(dl, 0.5) : fallbackDep;
    }
    for (let e = 0; e < 2; e++) {
      out.engine[d * 2 + e] = engine[d * 2 + e]!.length
        ? quantile(engine[d * 2 + e]!, 0.5)
        : e === 0
          ? DEFAULT_LATENCY.engine.HtoD
          : DEFAULT_LATENCY.engine.DtoH;
      out.chain[d * 2 + e] = chain[d * 2 + e]!.length ? quantile(chain[d * 2 + e]!, 0.5) : DEFAULT_LATENCY.chain;
    }
  }
  return out;
}
