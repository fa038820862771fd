// The what-if replay's dependency graph (replay.ts): which operation waits
// for which before it may start. Built for each replay, because a fix may
// move operations to other streams (whatif.ts: moveDefaultStreamWork), by
// one walk over the operations in the host model's issue order
// (replay-host.ts). An operation waits for:
//  * the previous operation of its stream (stream order);
//  * its call: it cannot start before the replayed host thread makes the
//    call that issues it (the scheduler counts this one down at the call);
//  * after a cudaStreamWaitEvent on its stream, what the event's last
//    record captured: the last operation issued to the recorded stream
//    before the record, and what that stream had itself been told to wait
//    for and not yet passed on to an operation of its own (a record on a
//    stream that only waited captures the wait: PyTorch chains its
//    streams that way, compute → side stream → NCCL's stream);
//  * the legacy default stream's implicit barrier, both ways: an operation
//    on the legacy stream waits for every operation issued before it to a
//    blocking stream of its context, and the next operation of each
//    blocking stream waits for the last legacy operation issued before it.
// All but the first half of the barrier are edges, counted per operation in
// `pending`. That half is a count instead (`LegacyBarrier.need`), checked
// against how much of the context's blocking work has completed (the
// scheduler's CompletedPrefix, native/addon/src/replay_scheduler.cc): one
// legacy operation may wait for thousands.
import type { Host } from '../host.ts';
import { IdTable } from '../../base/id-table.ts';
import { hostModel, LEGACY_STREAM, NOT_BLOCKING, type HostModel } from './replay-host.ts';
import type { Trace } from '../trace.ts';

// ---------------------------------------------------------------------------
// Where each call's and each context's ops lie in the issue order

/**
 * The same for every replay of a recording: computed on its first. (The
 * ops of call k are order[model.callPos[k] ..] while their call is k: the
 * host model emits them together, so no per-call end is stored.)
 */
export interface IssueIndex {
  /** The ops of context c in issue order: contextOps[contextStart[c] .. contextStart[c + 1]). */
  contextStart: Int32Array;
  contextOps: Int32Array;
}

const indexes = new WeakMap<HostModel, IssueIndex>();

export function issueIndex(host: Host, model: HostModel): IssueIndex {
  let index = indexes.get(model);
  if (index) return index;
  const { order } = model;
  const n = order.length;
  // Counting sort of the issue order by context. One context (the usual
  // case): the issue order itself, not a 40 MB copy of it per 10 M ops.
  const C = model.contexts;
  const contextStart = new Int32Array(C + 1);
  let contextOps = order;
  if (C === 1) contextStart[1] = n;
  else {
    for (let i = 0; i < n; i++) contextStart[model.ctxOfOp[i]! + 1]!++;
    for (let c = 0; c < C; c++) contextStart[c + 1]! += contextStart[c]!;
    contextOps = new Int32Array(n);
    const fill = contextStart.slice(0, C);
    for (let p = 0; p < n; p++) {
      const i = order[p]!;
      contextOps[fill[model.ctxOfOp[i]!]!++] = i;
    }
  }
  indexes.set(model, (index = { contextStart, contextOps }));
  return index;
}

// ---------------------------------------------------------------------------
// The graph

/**
 * What the legacy default stream's barrier needs, where a replay has work
 * on a legacy stream. Contexts are the host model's dense indexes.
 */
export interface LegacyBarrier {
  /** Per op on a legacy stream: the blocking-stream ops of its context issued before it. */
  need: Int32Array;
  /** Blocking-stream ops of each context in issue order: ops[first[c] .. end[c]). */
  blockingOps: Int32Array;
  first: Int32Array;
  end: Int32Array;
}

export interface DependencyGraph {
  /** Per op: its stream, as a dense index. */
  opStream: Int32Array;
  /** Per dense stream: 1 for a legacy default stream; 1 for a blocking stream (one that synchronizes with it). */
  isLegacyStream: Uint8Array;
  isBlockingStream: Uint8Array;
  /** Per op: the next op of its stream, -1 for none. */
  nextInStream: Int32Array;
  /**
   * Per op: the edges into it not yet satisfied (its stream's previous op,
   * its call, event waits, the legacy op before it). The scheduler counts
   * them down; at 0 the op is released.
   */
  pending: Int32Array;
  /**
   * The other edges than stream order (event waits, legacy barrier), by source: op i's are edgeTo[edgeStart[i] ..
   * edgeStart[i + 1]). Empty where there are none (a program without events or the legacy stream: 40 MB of zeros at
   * 10 M ops not made for each replay).
   */
  edgeStart: Int32Array;
  edgeTo: Int32Array;
  /** Null where no op runs on a legacy default stream. */
  legacy: LegacyBarrier | null;
  /** The event-wait edges alone (no legacy barrier), by target in issue order: op waitTo[j] waits for waitFrom[j]. */
  waitFrom: Int32Array;
  waitTo: Int32Array;
  /**
   * Per event-wait edge: the cudaEventRecord call that captured waitFrom[j]
   * and the cudaStreamWaitEvent call on waitTo[j]'s stream (call indexes;
   * where the wait was passed on through streams without ops, the first
   * record and the last wait). -1 for an edge a fix's waitFor made.
   */
  waitRecordCall: Int32Array;
  waitCall: Int32Array;
  /** The legacy barrier's edges into blocking streams, in issue order: op barrierTo[j] waits for the legacy op barrierFrom[j]. */
  barrierFrom: Int32Array;
  barrierTo: Int32Array;
}

/** What a fix may change about streams and event waits (replay.ts: ReplayOptions). */
export interface StreamChanges {
  stream?: Int32Array;
  streamFlags?: Map<number, number>;
  /**
   * Per op: the ops it waits for instead of what the recorded event waits
   * on its stream gave it (stream order and its call stay): how a fix
   * moves a dependency (whatif.ts: overlap-collectives).
   */
  waitFor?: ReadonlyMap<number, readonly number[]>;
}

/**
 * Per-op arrays the graph is written into: kept between replays by the
 * caller (replay.ts). Any content: the graph sets every op's entry.
 * opStream null: allocated here when a fix changes streams (else the host
 * model's are used), and kept.
 */
export interface GraphScratch {
  opStream: Int32Array | null;
  nextInStream: Int32Array;
  pending: Int32Array;
}

export function buildGraph(trace: Trace, host: Host, model: HostModel, index: IssueIndex, changes: StreamChanges, scratch: GraphScratch): DependencyGraph {
  const n = trace.ops.length;
  const streams = graphStreams(trace, model, changes, scratch);
  const walk = new GraphWalk(host, model, index, changes, scratch, streams);
  walk.run(n);
  const { edgeStart, edgeTo } = edgesBySource(n, walk.edgeFrom, walk.edgeTo, scratch.pending);
  return {
    opStream: streams.opStream,
    isLegacyStream: walk.isLegacyStream,
    isBlockingStream: walk.isBlockingStream,
    nextInStream: scratch.nextInStream,
    pending: scratch.pending,
    edgeStart,
    edgeTo,
    legacy: walk.legacy,
    ...walk.waitAndBarrierEdges(),
  };
}

/** The replay's streams: per op its dense stream; dense indexes by streams.id; per dense stream its flags; whether any op runs on a legacy stream. */
interface GraphStreams {
  opStream: Int32Array;
  denseOf: { get(id: number): number };
  flags: ArrayLike<number>;
  anyLegacy: boolean;
}

/**
 * Dense stream indexes, with each stream's flags: a fix's, else the
 * recorded ones (a stream not in the table has none). Where the fix
 * changes neither, the host model's (its streams may include some without
 * ops: their lists stay empty, as those of streams the graph does not
 * index).
 */
function graphStreams(trace: Trace, model: HostModel, changes: StreamChanges, scratch: GraphScratch): GraphStreams {
  if (changes.stream === undefined && changes.streamFlags === undefined) {
    return { opStream: model.opStream, denseOf: model.streamIndex, flags: model.streamFlags, anyLegacy: model.legacyOps };
  }
  const n = trace.ops.length;
  const streamOf = changes.stream ?? trace.ops.stream;
  const rows = new Map(trace.streams.map((s) => [s.id, s]));
  const table = IdTable.of(streamOf.subarray(0, n));
  const list: number[] = [];
  const opStream = (scratch.opStream ??= new Int32Array(n));
  for (let i = 0; i < n; i++) {
    const id = streamOf[i]!;
    let s = table.get(id);
    if (s < 0) {
      table.set(id, (s = list.length));
      list.push(changes.streamFlags?.get(id) ?? rows.get(id)?.flags ?? 0);
    }
    opStream[i] = s;
  }
  // Every dense stream has an op of the replay (it was met as one's stream).
  return { opStream, denseOf: table, flags: list, anyLegacy: list.some((f) => (f & LEGACY_STREAM) !== 0) };
}

/**
 * The walk in issue order that finds each op's edges: its stream's
 * previous op and its call (counted in `pending`), the event waits on its
 * stream (a fix's waits instead where it gives some), the legacy barrier.
 * Its fields are the walk's variables: the loop over 10 M ops reads them
 * as a function reads its locals, the same types throughout, and
 * allocates nothing per op (only per edge and per event record or wait).
 */
class GraphWalk {
  /** Per dense stream: 1 for a legacy default stream; 1 for a blocking stream (one that synchronizes with it). */
  readonly isLegacyStream: Uint8Array;
  readonly isBlockingStream: Uint8Array;
  readonly legacy: LegacyBarrier | null;
  /**
   * The edges other than stream order, as found. Event-wait and legacy
   * edges interleave in edgeFrom/edgeTo; which are which is kept aside
   * (waitIndex, barrierIndex), the wait edges with their calls.
   */
  readonly edgeFrom: number[] = [];
  readonly edgeTo: number[] = [];
  private readonly waitIndex: number[] = [];
  private readonly waitRecordCall: number[] = [];
  private readonly waitCall: number[] = [];
  private readonly barrierIndex: number[] = [];

  private readonly order: Int32Array;
  private readonly ctxOfOp: Int32Array;
  private readonly opCall: Int32Array;
  private readonly opStream: Int32Array;
  private readonly denseOf: { get(id: number): number };
  private readonly nextInStream: Int32Array;
  private readonly pending: Int32Array;
  private readonly lastOfStream: Int32Array;
  // Legacy barrier: per context the last legacy op and the blocking ops
  // issued so far; per stream the legacy op it already has an edge from
  // (its later ops wait for it through stream order).
  private readonly lastLegacy: Int32Array;
  private readonly blockingIssued: Int32Array;
  private readonly streamSawLegacy: Int32Array;
  // An awaited op travels as an entry: the op, the record call that
  // captured it and the wait call that last passed it to a stream (-1:
  // none yet), so that each wait edge can name both calls.
  private readonly entryOp: number[] = [];
  private readonly entryRecord: number[] = [];
  private readonly entryWait: number[] = [];
  // Event records and waits, at their positions in the issue order: what
  // each event captured (`${pid}:${eventId}` → an entry, -1 for nothing, or
  // several where the recorded stream had waits pending), and the entries
  // each stream's next op must wait for.
  private readonly eventOps: HostModel['eventOps'];
  private readonly waitFor: StreamChanges['waitFor'];
  private readonly captured = new Map<string, number | number[]>();
  private readonly waitsOfStream: number[][];
  /** Streams that run no op of the replay still pass waits on (by streams.id). */
  private readonly waitsOfIdle = new Map<number, number[]>();
  /** Per op, its position in the issue order (where there are event records or waits: addWait). */
  private readonly emitted: Int32Array | null;
  /** Are there wait edges to look for (event records or waits, or a fix's waits)? */
  private readonly streamWaits: boolean;

  constructor(host: Host, model: HostModel, index: IssueIndex, changes: StreamChanges, scratch: GraphScratch, streams: GraphStreams) {
    const n = model.order.length;
    const S = streams.flags.length;
    const C = model.contexts;
    this.isLegacyStream = Uint8Array.from(streams.flags, (f) => (f & LEGACY_STREAM ? 1 : 0));
    this.isBlockingStream = Uint8Array.from(streams.flags, (f) => (f & NOT_BLOCKING ? 0 : 1));
    // The blocking ops of a context are some of its ops: its slots in the
    // context index hold them (from the front).
    this.legacy = streams.anyLegacy
      ? { need: new Int32Array(n), blockingOps: new Int32Array(n), first: index.contextStart.slice(0, C), end: index.contextStart.slice(0, C) }
      : null;
    this.order = model.order;
    this.ctxOfOp = model.ctxOfOp;
    this.opCall = host.opCall;
    this.opStream = streams.opStream;
    this.denseOf = streams.denseOf;
    this.nextInStream = scratch.nextInStream;
    this.pending = scratch.pending;
    this.lastOfStream = new Int32Array(S).fill(-1);
    this.lastLegacy = new Int32Array(C).fill(-1);
    this.blockingIssued = new Int32Array(C);
    this.streamSawLegacy = new Int32Array(S).fill(-1);
    this.eventOps = model.eventOps;
    this.waitFor = changes.waitFor;
    this.waitsOfStream = Array.from({ length: S }, () => []);
    this.emitted = this.eventOps.length ? new Int32Array(n) : null;
    this.streamWaits = this.eventOps.length > 0 || this.waitFor !== undefined;
  }

  /** The walk over the n ops in issue order; at its end each stream's last op has no next one. */
  run(n: number): void {
    const { eventOps, lastOfStream, nextInStream } = this;
    // The ops between two event records or waits in one loop each (the events at position p come before op p; those
    // after the last op change nothing).
    let p = 0;
    for (const ev of eventOps) {
      if (ev.pos >= n) break;
      const to = Math.max(p, ev.pos);
      this.issue(p, to);
      p = to;
      this.eventAt(ev);
    }
    this.issue(p, n);
    // The walk set every other op's next one.
    for (let s = 0; s < lastOfStream.length; s++) if (lastOfStream[s]! >= 0) nextInStream[lastOfStream[s]!] = -1;
  }

  /** The ops at positions [from, to) of the issue order: each its stream's next, its edges counted. */
  private issue(from: number, to: number): void {
    const { order, opStream, ctxOfOp, opCall, lastOfStream, nextInStream, pending, emitted, legacy, streamWaits } = this;
    for (let p = from; p < to; p++) {
      const i = order[p]!;
      if (emitted) emitted[i] = p;
      const s = opStream[i]!;
      const prev = lastOfStream[s]!;
      if (prev >= 0) nextInStream[prev] = i;
      lastOfStream[s] = i;
      // Its stream's previous op and its call (the walk meets each op once:
      // set, not added to, so the scratch array needs no clearing).
      pending[i] = (prev >= 0 ? 1 : 0) + (opCall[i]! >= 0 ? 1 : 0);
      if (streamWaits) this.waitEdgesInto(i, s);
      if (legacy) this.legacyBarrierAt(legacy, i, s, ctxOfOp[i]!);
    }
  }

  /** An event record (what its event captures: its stream's last op, and what the stream was waiting for) or a stream wait (what its stream's next op waits for). */
  private eventAt(ev: HostModel['eventOps'][number]): void {
    const { captured, entryOp, entryRecord } = this;
    const s = this.denseOf.get(ev.stream);
    const pendingWaits = this.pendingOf(s, ev.stream);
    if (!ev.wait) {
      const last = s >= 0 ? this.lastOfStream[s]! : -1;
      if (pendingWaits.length === 0) captured.set(ev.key, last >= 0 ? this.entry(last, ev.call, -1) : -1);
      else {
        const all = pendingWaits.slice();
        if (last >= 0) this.addWait(all, this.entry(last, ev.call, -1));
        captured.set(ev.key, all);
      }
    } else {
      const c = captured.get(ev.key);
      if (typeof c === 'number') {
        if (c >= 0) this.addWait(pendingWaits, this.entry(entryOp[c]!, entryRecord[c]!, ev.call));
      } else if (c) for (const x of c) this.addWait(pendingWaits, this.entry(entryOp[x]!, entryRecord[x]!, ev.call));
    }
  }

  private entry(op: number, record: number, wait: number): number {
    this.entryOp.push(op);
    this.entryRecord.push(record);
    this.entryWait.push(wait);
    return this.entryOp.length - 1;
  }

  /** The entries dense stream s (streams.id `id`; s < 0: a stream without ops in the replay) will make its next op wait for. */
  private pendingOf(s: number, id: number): number[] {
    if (s >= 0) return this.waitsOfStream[s]!;
    let w = this.waitsOfIdle.get(id);
    if (!w) this.waitsOfIdle.set(id, (w = []));
    return w;
  }

  /**
   * Adds entry x to a list of waits. A wait for an op implies the waits for
   * the ops before it on its stream: a list keeps the latest per stream, so
   * that a stream without ops, which never passes its waits on, holds one
   * per stream at most.
   */
  private addWait(list: number[], x: number): void {
    const { entryOp, opStream } = this;
    const emitted = this.emitted!;
    const op = entryOp[x]!;
    for (let k = 0; k < list.length; k++) {
      const held = entryOp[list[k]!]!;
      if (opStream[held] === opStream[op]) {
        if (emitted[op]! > emitted[held]!) list[k] = x;
        return;
      }
    }
    list.push(x);
  }

  /** Op i's wait edges (its stream s's pending waits, or a fix's waits instead), its stream's list then emptied. */
  private waitEdgesInto(i: number, s: number): void {
    const w = this.waitsOfStream[s]!;
    const instead = this.waitFor?.get(i);
    if (instead) for (const from of instead) this.waitEdge(from, i, -1, -1);
    else for (const x of w) this.waitEdge(this.entryOp[x]!, i, this.entryRecord[x]!, this.entryWait[x]!);
    // Setting a JS array's length is a slow path in V8 even when it is
    // already 0 (0.2 s per 10 M ops): only a list that held waits is emptied.
    if (w.length) w.length = 0;
  }

  private waitEdge(from: number, to: number, recordCall: number, waitCall: number): void {
    this.waitIndex.push(this.edgeFrom.length);
    this.waitRecordCall.push(recordCall);
    this.waitCall.push(waitCall);
    this.edgeFrom.push(from);
    this.edgeTo.push(to);
  }

  /** The legacy barrier at op i (stream s, context c): a legacy op's count of blocking ops before it; a blocking op's edge from the last legacy op it has none from. */
  private legacyBarrierAt(legacy: LegacyBarrier, i: number, s: number, c: number): void {
    if (this.isLegacyStream[s]) {
      legacy.need[i] = this.blockingIssued[c]!;
      this.lastLegacy[c] = i;
    } else if (this.isBlockingStream[s]) {
      legacy.blockingOps[legacy.end[c]!++] = i;
      this.blockingIssued[c]!++;
      const l = this.lastLegacy[c]!;
      if (l >= 0 && this.streamSawLegacy[s] !== l) {
        this.barrierIndex.push(this.edgeFrom.length);
        this.edgeFrom.push(l);
        this.edgeTo.push(i);
        this.streamSawLegacy[s] = l;
      }
    }
  }

  /** The event-wait edges with their calls and the legacy barrier's edges, each in issue order (DependencyGraph). */
  waitAndBarrierEdges(): Pick<DependencyGraph, 'waitFrom' | 'waitTo' | 'waitRecordCall' | 'waitCall' | 'barrierFrom' | 'barrierTo'> {
    const { edgeFrom, edgeTo, waitIndex, barrierIndex } = this;
    return {
      waitFrom: Int32Array.from(waitIndex, (j) => edgeFrom[j]!),
      waitTo: Int32Array.from(waitIndex, (j) => edgeTo[j]!),
      waitRecordCall: Int32Array.from(this.waitRecordCall),
      waitCall: Int32Array.from(this.waitCall),
      barrierFrom: Int32Array.from(barrierIndex, (j) => edgeFrom[j]!),
      barrierTo: Int32Array.from(barrierIndex, (j) => edgeTo[j]!),
    };
  }
}

/**
 * The edges as CSR by source, each counted at its target in `pending`.
 * Counts at each source, summed to where its edges end, then placed from
 * the last edge back (each source's edges keep their order) moving the
 * bound to where they start: no second array of n. No edges (no event
 * waits, no legacy work): all zero already.
 */
function edgesBySource(n: number, edgeFrom: number[], edgeTo: number[], pending: Int32Array): { edgeStart: Int32Array; edgeTo: Int32Array } {
  const E = edgeFrom.length;
  const edgeStart = new Int32Array(E > 0 ? n + 1 : 0);
  const to = new Int32Array(E);
  if (E > 0) {
    for (let j = 0; j < E; j++) edgeStart[edgeFrom[j]!]!++;
    for (let i = 0; i < n; i++) edgeStart[i + 1]! += edgeStart[i]!;
    for (let j = E - 1; j >= 0; j--) {
      to[--edgeStart[edgeFrom[j]!]!] = edgeTo[j]!;
      pending[edgeTo[j]!]!++;
    }
  }
  return { edgeStart, edgeTo: to };
}

const recorded = new WeakMap<HostModel, DependencyGraph>();

/**
 * The graph of the recording as it ran (no fix), with its host model: what
 * the analyses that read dependencies rather than replay them use
 * (collective-groups.ts, dependencies.ts). Built once per recording.
 */
export function recordedGraph(trace: Trace, host: Host): { model: HostModel; graph: DependencyGraph } {
  const model = hostModel(trace, host);
  let graph = recorded.get(model);
  if (!graph) {
    const n = trace.ops.length;
    const scratch = { opStream: null, nextInStream: new Int32Array(n), pending: new Int32Array(n) };
    recorded.set(model, (graph = buildGraph(trace, host, model, issueIndex(host, model), {}, scratch)));
  }
  return { model, graph };
}
