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
//  * durations as recorded, unless the caller (a fix) overrides them; an
//    op recorded still running when the next op of its stream began (a
//    CUDA graph's branches, a record whose end is off) runs until then: the
//    replay runs a stream's ops one after another (replay-host.ts
//    deviceWork).
//  * handoffs between threads: a call that started right after another
//    thread of its process ended one, where that thread's calls filled its
//    idle gap edge to edge (PyTorch's main thread waiting in
//    loss.backward() while the autograd thread launches the backward
//    pass), starts that long after that call's replayed end, its own idle
//    time before it counted as the wait (replay-host.ts: inferHandoffs).
// Approximations, beyond those above: other cross-thread ordering that the
// program enforces itself (locks, joins) is not seen; the issue order of
// threads and of event records is the recorded one; cudaSetDevice is not
// recorded, so a device sync's device is inferred (the one whose work
// completed inside the call, else the thread's last one).
//
// How the code is laid out: replay() below builds what one replay needs and
// runs it. The host model (replay-host.ts: what each call waited for, the
// issue order, the GPU's latencies) is inferred once per recording; the
// dependency graph (replay-graph.ts: stream order, event waits, the legacy
// barrier) is built per replay, since a fix may move ops between streams;
// the resource model (replay-resources.ts: copy engines, SMs, duplex) says
// what each op needs. The scheduler, the simulation itself, is native
// (native/addon/src/replay_scheduler.cc: its events in time order in a
// 4-ary heap, with FIFO runs of the events that come in order and a small
// heap of the duplex copies' completions beside it), over the typed arrays
// all of the above are made of: at 10 M operations ~0.35 s where the same
// simulation in JavaScript took ~1.1 s, with the same results to the bit
// (test/analysis/replay-identity.test.ts pins them).
import { hostModel, type HostModel } from './replay-host.ts';
import { buildGraph, issueIndex, type DependencyGraph, type IssueIndex } from './replay-graph.ts';
import { replaySchedule } from '../../native/addon.ts';
import { opResources } from './replay-resources.ts';
import type { Ns } from '../../contract/time.ts';
import type { Host } from '../host.ts';
import type { Trace } from '../trace.ts';

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

// ---------------------------------------------------------------------------
// The replay

/**
 * Per-op working arrays, kept between replays of one recording: a replay
 * of 10 M ops needs ~300 MB of them, and allocating that anew for each
 * estimate made later replays slower (garbage collection). A replay marks
 * them in use, so that one started while they are (re-entered) gets arrays
 * of its own.
 */
interface Scratch {
  /** Graph (replay-graph.ts): dense stream (null until a fix changes streams), next op of the stream, edges not yet satisfied. */
  opStream: Int32Array | null;
  nextInStream: Int32Array;
  pending: Int32Array;
  /** Scheduler (replay_scheduler.cc): resource queues, completed. */
  queueNext: Int32Array;
  done: Uint8Array;
  inUse: boolean;
}
const scratchOf = new WeakMap<HostModel, Scratch>();

function scratch(model: HostModel, n: number): Scratch {
  let sc = scratchOf.get(model);
  // The graph sets every op's pending count and next op, and an op's
  // queue link is set when it joins a queue: only done is cleared for a
  // later replay (fresh arrays are zeroed already).
  if (sc && !sc.inUse) sc.done.fill(0);
  else {
    sc = {
      nextInStream: new Int32Array(n),
      pending: new Int32Array(n),
      queueNext: new Int32Array(n),
      done: new Uint8Array(n),
      opStream: null,
      inUse: false,
    };
    if (!scratchOf.has(model)) scratchOf.set(model, sc);
  }
  return sc;
}

/**
 * What every replay of this recording shares, made ahead of the first: the
 * host model, the issue order by context, each op's engine and SM share,
 * each thread's calls end to end, the scratch arrays (their pages written
 * once here, not during the replay). The what-if thread makes them while
 * the diagnosis's rules run, before a rule names a fix (at 10 M operations
 * ~0.2 s the fix's replay does not wait for). Each is made once per host
 * model: a replay after it finds them made, so its result is the same.
 */
export function prepareReplays(trace: Trace, host: Host): void {
  const model = hostModel(trace, host);
  issueIndex(host, model);
  opResources(trace, model);
  flatThreadCalls(model);
  const sc = scratch(model, trace.ops.length);
  // The arrays every replay writes whole, written now; the queue links only where an op queues (at 10 M launches few
  // do: 40 MB of pages not written here for nothing).
  for (const a of [sc.nextInStream, sc.pending]) a.fill(0);
}

/** Each host thread's calls end to end, as the native scheduler and the CUDA-graph fix read them: thread th's are calls[start[th] .. start[th + 1]). */
export interface ThreadCalls {
  start: Int32Array;
  calls: Int32Array;
}
const threadCallsOf = new WeakMap<HostModel, ThreadCalls>();

export function flatThreadCalls(model: HostModel): ThreadCalls {
  let t = threadCallsOf.get(model);
  if (t) return t;
  const lists = model.threadCalls;
  const start = new Int32Array(lists.length + 1);
  let adjacent = lists.length > 0;
  for (let th = 0; th < lists.length; th++) {
    start[th + 1] = start[th]! + lists[th]!.length;
    const l = lists[th]!;
    adjacent &&= l.buffer === lists[0]!.buffer && l.byteOffset === lists[0]!.byteOffset + 4 * start[th]!;
  }
  // The lists are views of one array, one after the other (host.ts: the native call index's): that array.
  let calls: Int32Array;
  if (adjacent) calls = new Int32Array(lists[0]!.buffer, lists[0]!.byteOffset, start[lists.length]!);
  else {
    calls = new Int32Array(start[lists.length]!);
    for (let th = 0; th < lists.length; th++) calls.set(lists[th]!, start[th]!);
  }
  threadCallsOf.set(model, (t = { start, calls }));
  return t;
}

/**
 * One replay's simulation, native (replay_scheduler.cc): what it reads
 * handed over as the arrays they are, each op's start and end written into
 * arrays of this replay's own (a fix's refinement reads the first replay's
 * while the second runs), the scratch arrays worked in.
 */
function simulate(trace: Trace, host: Host, model: HostModel, index: IssueIndex, graph: DependencyGraph, options: ReplayOptions, sc: Scratch): ReplayResult {
  const n = trace.ops.length;
  const D = model.devIndex.size;
  const res = opResources(trace, model);
  const threads = flatThreadCalls(model);
  const { legacy } = graph;
  const start = new Float64Array(n);
  const end = new Float64Array(n);
  const busyOf = new Float64Array(D);
  const r = replaySchedule({
    ops: n,
    calls: host.calls.length,
    devices: D,
    contexts: model.contexts,
    threads: model.threadCalls.length,
    kind: trace.ops.kind,
    opStart: trace.ops.start,
    devOf: model.devOf,
    ctxOfOp: model.ctxOfOp,
    opCall: host.opCall,
    work: model.work,
    engine: res.engine,
    share: res.share,
    duplex: res.duplex,
    sharedEngine: res.sharedEngine,
    pending: graph.pending,
    nextInStream: graph.nextInStream,
    opStream: graph.opStream,
    isLegacyStream: graph.isLegacyStream,
    isBlockingStream: graph.isBlockingStream,
    edgeStart: graph.edgeStart,
    edgeTo: graph.edgeTo,
    legacyNeed: legacy?.need ?? null,
    legacyBlockingOps: legacy?.blockingOps ?? null,
    legacyFirst: legacy?.first ?? null,
    legacyEnd: legacy?.end ?? null,
    contextOps: index.contextOps,
    contextStart: index.contextStart,
    callStart: host.calls.start,
    callEnd: host.calls.end,
    cost: model.cost,
    outer: model.outer,
    waitsOwn: model.waitsOwn,
    waitKind: model.waitKind,
    waitArg: model.waitArg,
    waitCtx: model.waitCtx,
    order: model.order,
    callPos: model.callPos,
    handoff: model.handoffs ? model.handoff : null,
    threadStart: threads.start,
    threadCalls: threads.calls,
    launchLatency: model.latency.launch,
    dependencyLatency: model.latency.dependency,
    chainLatency: model.latency.chain,
    engineLatency: model.latency.engine,
    duplexFactor: model.duplex,
    duration: options.duration ?? null,
    pinned: options.pinned ?? null,
    freed: options.freed ?? null,
    callDuration: options.callDuration ?? null,
    lagUnknown: options.lagUnknown ?? null,
    callGap: options.callGap ?? null,
    afterLatency: options.afterLatency ?? null,
    queueNext: sc.queueNext,
    done: sc.done,
    start,
    end,
    busy: busyOf,
  });
  const busy = new Map<number, number>();
  for (const [id, d] of model.devIndex) busy.set(id, busyOf[d]!);
  if (n === 0) return { start, end, makespanNs: 0, gpuSpanNs: 0, gpuStart: 0, gpuEnd: 0, firstIssue: 0, busy };
  const { gpuStart: gs, gpuEnd: ge, firstIssue } = r;
  return { start, end, makespanNs: ge - Math.min(firstIssue, gs), gpuSpanNs: ge - gs, gpuStart: gs, gpuEnd: ge, firstIssue, busy };
}

export function replay(trace: Trace, host: Host, options: ReplayOptions = {}): ReplayResult {
  const model = hostModel(trace, host);
  const sc = scratch(model, trace.ops.length);
  // Released whatever happens: a replay that threw must not leave the
  // scratch arrays marked busy, or every later replay of this recording
  // would allocate ~300 MB of its own.
  sc.inUse = true;
  try {
    const index = issueIndex(host, model);
    const graph = buildGraph(trace, host, model, index, options, sc);
    return simulate(trace, host, model, index, graph, options, sc);
  } finally {
    sc.inUse = false;
  }
}
