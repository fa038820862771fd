// What each GPU operation of a recording waited for before it could start,
// and what waited for it: the dependency view's data (query/dependencies.ts
// answers the API from it; the timeline draws it as arrows). Read from the
// graph the what-if replay runs on (replay-graph.ts, built once here with
// no fix applied), so that the view and the replay never disagree about
// which operation an event marked, including waits passed on through
// streams without operations of their own (PyTorch's compute → side
// stream → NCCL stream chains).
//
// An operation depends on:
//  * its launch: the API call with its correlation id (host.opCall);
//  * the previous operation of its stream, in issue order (stream order);
//  * event waits: after cudaStreamWaitEvent on its stream, the operation
//    the event's last cudaEventRecord marked (replay-graph.ts: the last
//    operation issued to the recorded stream before the record, or what
//    that stream was itself waiting for), with both calls;
//  * the legacy default stream's barrier: on the legacy stream, the
//    blocking-stream operation issued before it that ended last; on a
//    blocking stream, the legacy operation issued before it.
// And host calls depend on operations: a stream or event synchronize on the
// operation it waited for (the host model's inference, replay-host.ts).
//
// Times, for an operation W (ns, the recording's clock):
//  * issued(W): its launch call's end, or W's start where it started first
//    (a kernel may start before cudaLaunchKernel returns); none without a call;
//  * ready(W): when its stream was otherwise ready — the latest of issued(W),
//    the end of its stream's previous operation and of the barrier's;
//  * an event wait from X *held* W for min(end(X), start(W)) − ready(W), or 0
//    when that is negative (the event had completed before the stream was
//    otherwise ready: the wait cost nothing). W's hold is [ready(W),
//    min(latest awaited end, start(W))] when not empty: the span the timeline
//    hatches on W's stream. The GPU's own latency after the awaited end
//    (a few µs) is not part of it.
//  * critical chain of W: at each step the dependency that ended last (its
//    launch counts at issued(), and wins a tie: the host was then last),
//    back to a launch call, the host call that made the chain possible.
import type { DependencyKind } from '../../contract/dependencies.ts';
import type { Host } from '../host.ts';
import { recordedGraph } from './replay-graph.ts';
import { WaitKind } from './replay-host.ts';
import type { Trace } from '../trace.ts';

/** Edges sorted by one of their ends, found by binary search: a recording has few compared with its operations, so no array per operation. */
class EdgeIndex {
  /** The end's values, ascending; `edge[j]` is the edge whose end is `key[j]`. */
  private readonly key: Int32Array;
  private readonly edge: Int32Array;
  constructor(ends: Int32Array) {
    this.edge = Int32Array.from(ends.keys()).sort((a, b) => ends[a]! - ends[b]! || a - b);
    this.key = Int32Array.from(this.edge, (j) => ends[j]!);
  }
  /** The edges whose end is `value`, in their original order. */
  of(value: number): Int32Array {
    let lo = 0;
    let hi = this.key.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.key[mid]! < value) lo = mid + 1;
      else hi = mid;
    }
    let end = lo;
    while (end < this.key.length && this.key[end] === value) end++;
    return this.edge.subarray(lo, end);
  }
}

/** One dependency of op `to` (for 'sync', of call `to`): `from` is an op, or a call for 'launch'; `edge` the event-wait edge, else -1. */
export interface Step {
  kind: DependencyKind;
  from: number;
  to: number;
  edge: number;
  /** When `from` made `to` possible: its end; a launch's issue time. */
  atNs: number;
}

export interface Dependencies {
  trace: Trace;
  host: Host;
  /** Per op: the previous op of its stream in issue order, -1 for none. */
  prev: Int32Array;
  /** Event-wait edges: op waitTo[j] waited for waitFrom[j], recorded by call waitRecord[j], waited by call waitCall[j] (-1: unknown). */
  waitFrom: Int32Array;
  waitTo: Int32Array;
  waitRecord: Int32Array;
  waitCall: Int32Array;
  waitsInto: EdgeIndex;
  waitsFrom: EdgeIndex;
  waitsRecordedBy: EdgeIndex;
  waitsWaitedBy: EdgeIndex;
  /** Legacy barrier edges into blocking streams (replay-graph.ts): barrierTo[j] waited for the legacy op barrierFrom[j]. */
  barrierFrom: Int32Array;
  barrierTo: Int32Array;
  barriersInto: EdgeIndex;
  barriersFrom: EdgeIndex;
  /** Per legacy-stream op: the blocking op issued before it that ended last (-1: none); null without legacy-stream work. */
  legacyWait: Int32Array | null;
  /** Host synchronizes: call syncCall[j] waited for op syncOp[j]. */
  syncCall: Int32Array;
  syncOp: Int32Array;
  syncsOfCall: EdgeIndex;
  syncsOfOp: EdgeIndex;
  /**
   * Ops held by an event wait (holdOp[h], a non-empty [holdStart[h],
   * holdEnd[h]]), per stream (streams.id) in start order: the hatched spans.
   */
  holdOp: Int32Array;
  holdStart: Float64Array;
  holdEnd: Float64Array;
  holdsOfStream: Map<number, Int32Array>;
}

const cache = new WeakMap<Host, Dependencies>();

/** The dependencies of a whole recording's ops (cached per Host: the graph walk is once per recording). */
export function dependenciesOf(trace: Trace, host: Host): Dependencies {
  let d = cache.get(host);
  if (!d) cache.set(host, (d = build(trace, host)));
  return d;
}

function build(trace: Trace, host: Host): Dependencies {
  const { ops } = trace;
  const n = ops.length;
  const { model, graph } = recordedGraph(trace, host);
  const prev = new Int32Array(n).fill(-1);
  for (let i = 0; i < n; i++) if (graph.nextInStream[i]! >= 0) prev[graph.nextInStream[i]!] = i;

  // The first half of the barrier is a count in the graph (LegacyBarrier.need):
  // the blocking op that ended last among those counted, by a running argmax.
  let legacyWait: Int32Array | null = null;
  if (graph.legacy) {
    const { need, blockingOps, first, end } = graph.legacy;
    const latest = new Int32Array(blockingOps.length).fill(-1);
    for (let c = 0; c < first.length; c++) {
      let best = -1;
      for (let p = first[c]!; p < end[c]!; p++) {
        const i = blockingOps[p]!;
        if (best < 0 || ops.end[i]! > ops.end[best]!) best = i;
        latest[p] = best;
      }
    }
    legacyWait = new Int32Array(n).fill(-1);
    for (let i = 0; i < n; i++) if (graph.isLegacyStream[graph.opStream[i]!] && need[i]! > 0) legacyWait[i] = latest[first[model.ctxOfOp[i]!]! + need[i]! - 1]!;
  }

  // Host synchronizes that waited for one op (not a blocking copy waiting for its own).
  const syncCall: number[] = [];
  const syncOp: number[] = [];
  for (let k = 0; k < model.waitKind.length; k++)
    if (model.waitKind[k] === WaitKind.Op && !model.waitsOwn[k]) {
      syncCall.push(k);
      syncOp.push(model.waitArg[k]!);
    }

  const d: Dependencies = {
    trace,
    host,
    prev,
    waitFrom: graph.waitFrom,
    waitTo: graph.waitTo,
    waitRecord: graph.waitRecordCall,
    waitCall: graph.waitCall,
    waitsInto: new EdgeIndex(graph.waitTo),
    waitsFrom: new EdgeIndex(graph.waitFrom),
    waitsRecordedBy: new EdgeIndex(graph.waitRecordCall),
    waitsWaitedBy: new EdgeIndex(graph.waitCall),
    barrierFrom: graph.barrierFrom,
    barrierTo: graph.barrierTo,
    barriersInto: new EdgeIndex(graph.barrierTo),
    barriersFrom: new EdgeIndex(graph.barrierFrom),
    legacyWait,
    syncCall: Int32Array.from(syncCall),
    syncOp: Int32Array.from(syncOp),
    syncsOfCall: new EdgeIndex(Int32Array.from(syncCall)),
    syncsOfOp: new EdgeIndex(Int32Array.from(syncOp)),
    holdOp: new Int32Array(0),
    holdStart: new Float64Array(0),
    holdEnd: new Float64Array(0),
    holdsOfStream: new Map(),
  };

  // Holds, from the edges above: each waiting op once (the graph lists its edges together, by target in issue order).
  const holdOp: number[] = [];
  const holdStart: number[] = [];
  const holdEnd: number[] = [];
  const streamHolds = new Map<number, number[]>();
  for (let j = 0; j < graph.waitTo.length; j++) {
    const w = graph.waitTo[j]!;
    if (j > 0 && graph.waitTo[j - 1] === w) continue;
    const hold = holdOf(d, w);
    if (!hold) continue;
    const h = holdOp.length;
    holdOp.push(w);
    holdStart.push(hold.startNs);
    holdEnd.push(hold.endNs);
    const list = streamHolds.get(ops.stream[w]!);
    if (list) list.push(h);
    else streamHolds.set(ops.stream[w]!, [h]);
  }
  d.holdOp = Int32Array.from(holdOp);
  d.holdStart = Float64Array.from(holdStart);
  d.holdEnd = Float64Array.from(holdEnd);
  // Holds of one stream never overlap (each lies between the end of its
  // op's predecessor and its op's start): in start order, their ends ascend too.
  for (const [s, list] of streamHolds)
    d.holdsOfStream.set(
      s,
      Int32Array.from(list).sort((a, b) => holdStart[a]! - holdStart[b]!),
    );
  return d;
}

/** When the host made op i possible (module header): its call's end, or its own start if earlier; null without a call. */
export function issuedAt(d: Dependencies, i: number): number | null {
  const k = d.host.opCall[i]!;
  return k < 0 ? null : Math.min(d.host.calls.end[k]!, d.trace.ops.start[i]!);
}

/** Everything op i waited for, each with when it made i possible: its launch, stream order, event waits, the barrier. */
export function dependenciesOfOp(d: Dependencies, i: number): Step[] {
  const { ops } = d.trace;
  const steps: Step[] = [];
  const issued = issuedAt(d, i);
  if (issued !== null) steps.push({ kind: 'launch', from: d.host.opCall[i]!, to: i, edge: -1, atNs: issued });
  const p = d.prev[i]!;
  if (p >= 0) steps.push({ kind: 'stream', from: p, to: i, edge: -1, atNs: ops.end[p]! });
  for (const j of d.waitsInto.of(i)) steps.push({ kind: 'event', from: d.waitFrom[j]!, to: i, edge: j, atNs: ops.end[d.waitFrom[j]!]! });
  const legacy = d.legacyWait?.[i] ?? -1;
  if (legacy >= 0) steps.push({ kind: 'barrier', from: legacy, to: i, edge: -1, atNs: ops.end[legacy]! });
  for (const j of d.barriersInto.of(i)) steps.push({ kind: 'barrier', from: d.barrierFrom[j]!, to: i, edge: -1, atNs: ops.end[d.barrierFrom[j]!]! });
  return steps;
}

/** When op i's stream was otherwise ready (module header): its event waits left out; null when nothing says. */
export function readyAt(d: Dependencies, i: number): number | null {
  let ready: number | null = null;
  for (const s of dependenciesOfOp(d, i)) if (s.kind !== 'event' && (ready === null || s.atNs > ready)) ready = s.atNs;
  return ready;
}

/** How long event-wait edge j held its op's start (module header); null when the op's readiness is unknown. */
export function waitTime(d: Dependencies, j: number): number | null {
  const w = d.waitTo[j]!;
  const ready = readyAt(d, w);
  if (ready === null) return null;
  return Math.max(0, Math.min(d.trace.ops.end[d.waitFrom[j]!]!, d.trace.ops.start[w]!) - ready);
}

/** The span an event wait held op w's start, and the awaited op that ended last; null when it held nothing. */
export function holdOf(d: Dependencies, w: number): { startNs: number; endNs: number; awaited: number } | null {
  const ready = readyAt(d, w);
  if (ready === null) return null;
  let awaited = -1;
  for (const j of d.waitsInto.of(w)) {
    const f = d.waitFrom[j]!;
    if (awaited < 0 || d.trace.ops.end[f]! > d.trace.ops.end[awaited]!) awaited = f;
  }
  if (awaited < 0) return null;
  const end = Math.min(d.trace.ops.end[awaited]!, d.trace.ops.start[w]!);
  return end > ready ? { startNs: ready, endNs: end, awaited } : null;
}

/**
 * The critical chain of op i (module header), from i back: step k's `to`
 * is step k−1's `from`. Ends at a launch call, at an op that waited for
 * nothing recorded, or after `max` steps (`complete` false).
 */
export function criticalChain(d: Dependencies, i: number, max: number): { steps: Step[]; complete: boolean } {
  const steps: Step[] = [];
  let at = i;
  while (steps.length < max) {
    let best: Step | null = null;
    // The launch comes first in dependenciesOfOp, and only a later time displaces a step: a tie goes to the host.
    for (const s of dependenciesOfOp(d, at)) if (!best || s.atNs > best.atNs) best = s;
    if (!best) return { steps, complete: true };
    steps.push(best);
    if (best.kind === 'launch') return { steps, complete: true };
    at = best.from;
  }
  return { steps, complete: false };
}

/** The holds (indexes into holdOp) on stream `streamId` that overlap [startNs, endNs], in time order. */
export function holdsIn(d: Dependencies, streamId: number, startNs: number, endNs: number): Int32Array {
  const list = d.holdsOfStream.get(streamId);
  if (!list) return new Int32Array(0);
  // Ends ascend with starts (no two holds of a stream overlap): the first that ends at or after startNs.
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (d.holdEnd[list[mid]!]! < startNs) lo = mid + 1;
    else hi = mid;
  }
  let end = lo;
  while (end < list.length && d.holdStart[list[end]!]! <= endNs) end++;
  return list.subarray(lo, end);
}
