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
// against how much of the context's blocking work has completed
// (CompletedPrefix): one legacy operation may wait for thousands.
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
// Completed prefixes

/**
 * Per context, how many of a list of its ops (in issue order) have
 * completed, counting from the first up to the first one still running or
 * waiting. A device synchronize waits until this count over all the
 * context's ops reaches the ops issued before the call; a legacy-stream op
 * until the count over the blocking-stream ops reaches those issued before
 * it. Each op is stepped over once per replay.
 */
export class CompletedPrefix {
  /** The lists: ops[first[c] .. end[c]) for context c. */
  private readonly ops: Int32Array;
  private readonly first: Int32Array;
  private readonly end: Int32Array;
  /** Per context: the first op of its list not known to be complete. */
  private readonly next: Int32Array;
  constructor(ops: Int32Array, first: Int32Array, end: Int32Array) {
    this.ops = ops;
    this.first = first;
    this.end = end;
    this.next = first.slice();
  }
  count(c: number): number {
    return this.next[c]! - this.first[c]!;
  }
  /** Steps past the ops of context c completed since the last call (`done` per op); returns the new count. */
  advance(c: number, done: Uint8Array): number {
    const ops = this.ops;
    const end = this.end[c]!;
    let p = this.next[c]!;
    while (p < end && done[ops[p]!]) p++;
    this.next[c] = p;
    return p - this.first[c]!;
  }
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
  /** The other edges than stream order (event waits, legacy barrier), by source: op i's are to[from[i] .. from[i + 1]). */
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
  const { ops } = trace;
  const n = ops.length;
  const streamOf = changes.stream ?? ops.stream;
  const { order, ctxOfOp } = model;
  const opCall = host.opCall;

  // Dense stream indexes, with each stream's flags: a fix's, else the
  // recorded ones (a stream not in the table has none). Where the fix
  // changes neither, the host model's (its streams may include some
  // without ops: their lists stay empty, as those of streams the graph
  // does not index).
  let opStream: Int32Array;
  let denseOf: { get(id: number): number };
  let flags: ArrayLike<number>;
  let anyLegacy: boolean;
  if (changes.stream === undefined && changes.streamFlags === undefined) {
    opStream = model.opStream;
    denseOf = model.streamIndex;
    flags = model.streamFlags;
    anyLegacy = model.legacyOps;
  } else {
    const rows = new Map(trace.streams.map((s) => [s.id, s]));
    const table = IdTable.of(streamOf.subarray(0, n));
    const list: number[] = [];
    opStream = scratch.opStream ??= new Int32Array(n);
    for (let i = 0; i < n; i++) {
      const id = streamOf[i]!;
      let s = table.get(id);
      if (s < 0) {
        table.set(id, (s = list.length));
        list.push(changes.streamFlags?.get(id) ?? rows.get(id)?.flags ?? 0);
      }
      opStream[i] = s;
    }
    denseOf = table;
    flags = list;
    // Every dense stream has an op of the replay (it was met as one's stream).
    anyLegacy = list.some((f) => (f & LEGACY_STREAM) !== 0);
  }
  const S = flags.length;
  const C = model.contexts;
  const isLegacyStream = Uint8Array.from(flags, (f) => (f & LEGACY_STREAM ? 1 : 0));
  const isBlockingStream = Uint8Array.from(flags, (f) => (f & NOT_BLOCKING ? 0 : 1));

  // The walk in issue order.
  const nextInStream = scratch.nextInStream;
  const pending = scratch.pending;
  const lastOfStream = new Int32Array(S).fill(-1);
  // Legacy barrier: per context the last legacy op and the blocking ops
  // issued so far; per stream the legacy op it already has an edge from
  // (its later ops wait for it through stream order).
  const lastLegacy = new Int32Array(C).fill(-1);
  const blockingIssued = new Int32Array(C);
  const streamSawLegacy = new Int32Array(S).fill(-1);
  // The blocking ops of a context are some of its ops: its slots in the
  // context index hold them (from the front).
  const legacy: LegacyBarrier | null = anyLegacy
    ? { need: new Int32Array(n), blockingOps: new Int32Array(n), first: index.contextStart.slice(0, C), end: index.contextStart.slice(0, C) }
    : null;
  const edgeFrom: number[] = [];
  const edgeTo: number[] = [];
  // Event-wait and legacy edges interleave in edgeFrom/edgeTo; which are
  // which is kept aside, the wait edges with their calls.
  const waitIndex: number[] = [];
  const waitRecordCall: number[] = [];
  const waitCall: number[] = [];
  const barrierIndex: number[] = [];
  // An awaited op travels as an entry: the op, the record call that
  // captured it and the wait call that last passed it to a stream (-1:
  // none yet), so that each wait edge can name both calls.
  const entryOp: number[] = [];
  const entryRecord: number[] = [];
  const entryWait: number[] = [];
  const entry = (op: number, record: number, wait: number) => {
    entryOp.push(op);
    entryRecord.push(record);
    entryWait.push(wait);
    return entryOp.length - 1;
  };
  // Event records and waits, at their positions in the issue order: what
  // each event captured (`${pid}:${eventId}` → an entry, -1 for nothing, or
  // several where the recorded stream had waits pending), and the entries
  // each stream's next op must wait for.
  const { eventOps } = model;
  const waitFor = changes.waitFor;
  const captured = new Map<string, number | number[]>();
  const waitsOfStream: number[][] = Array.from({ length: S }, () => []);
  // Streams that run no op of the replay still pass waits on (by streams.id).
  const waitsOfIdle = new Map<number, number[]>();
  const pendingOf = (s: number, id: number) => {
    if (s >= 0) return waitsOfStream[s]!;
    let w = waitsOfIdle.get(id);
    if (!w) waitsOfIdle.set(id, (w = []));
    return w;
  };
  // A wait for an op implies the waits for the ops before it on its stream:
  // a list keeps the latest per stream, so that a stream without ops, which
  // never passes its waits on, holds one per stream at most.
  const emitted = eventOps.length ? new Int32Array(n) : null;
  const addWait = (list: number[], x: number) => {
    const op = entryOp[x]!;
    for (let k = 0; k < list.length; k++) {
      const held = entryOp[list[k]!]!;
      if (opStream[held] === opStream[op]) {
        if (emitted![op]! > emitted![held]!) list[k] = x;
        return;
      }
    }
    list.push(x);
  };
  const streamWaits = eventOps.length > 0 || waitFor !== undefined;
  let e = 0;
  for (let p = 0; p < n; p++) {
    while (e < eventOps.length && eventOps[e]!.pos <= p) {
      const ev = eventOps[e++]!;
      const s = denseOf.get(ev.stream);
      const pendingWaits = pendingOf(s, ev.stream);
      if (!ev.wait) {
        const last = s >= 0 ? lastOfStream[s]! : -1;
        if (pendingWaits.length === 0) captured.set(ev.key, last >= 0 ? entry(last, ev.call, -1) : -1);
        else {
          const all = pendingWaits.slice();
          if (last >= 0) addWait(all, entry(last, ev.call, -1));
          captured.set(ev.key, all);
        }
      } else {
        const c = captured.get(ev.key);
        if (typeof c === 'number') {
          if (c >= 0) addWait(pendingWaits, entry(entryOp[c]!, entryRecord[c]!, ev.call));
        } else if (c) for (const x of c) addWait(pendingWaits, entry(entryOp[x]!, entryRecord[x]!, ev.call));
      }
    }
    const i = order[p]!;
    if (emitted) emitted[i] = p;
    const s = opStream[i]!;
    const c = ctxOfOp[i]!;
    const prev = lastOfStream[s]!;
    if (prev >= 0) nextInStream[prev] = i;
    lastOfStream[s] = i;
    // Its stream's previous op and its call (the walk meets each op once:
    // set, not added to, so the scratch array needs no clearing).
    pending[i] = (prev >= 0 ? 1 : 0) + (opCall[i]! >= 0 ? 1 : 0);
    // Its wait edges (none to look for without event records or waits, or a fix's waits).
    if (streamWaits) {
      const w = waitsOfStream[s]!;
      const instead = waitFor?.get(i);
      if (instead)
        for (const from of instead) {
          waitIndex.push(edgeFrom.length);
          waitRecordCall.push(-1);
          waitCall.push(-1);
          edgeFrom.push(from);
          edgeTo.push(i);
        }
      else
        for (const x of w) {
          waitIndex.push(edgeFrom.length);
          waitRecordCall.push(entryRecord[x]!);
          waitCall.push(entryWait[x]!);
          edgeFrom.push(entryOp[x]!);
          edgeTo.push(i);
        }
      // Setting a JS array's length is a slow path in V8 even when it is
      // already 0 (0.2 s per 10 M ops): only a list that held waits is emptied.
      if (w.length) w.length = 0;
    }
    if (legacy) {
      if (isLegacyStream[s]) {
        legacy.need[i] = blockingIssued[c]!;
        lastLegacy[c] = i;
      } else if (isBlockingStream[s]) {
        legacy.blockingOps[legacy.end[c]!++] = i;
        blockingIssued[c]!++;
        const l = lastLegacy[c]!;
        if (l >= 0 && streamSawLegacy[s] !== l) {
          barrierIndex.push(edgeFrom.length);
          edgeFrom.push(l);
          edgeTo.push(i);
          streamSawLegacy[s] = l;
        }
      }
    }
  }

  // Each stream's last op has no next one (the walk set every other op's).
  for (let s = 0; s < S; s++) if (lastOfStream[s]! >= 0) nextInStream[lastOfStream[s]!] = -1;

  // The edges as CSR by source, each counted at its target. Counts at each
  // source, summed to where its edges end, then placed from the last edge
  // back (each source's edges keep their order) moving the bound to where
  // they start: no second array of n. No edges (no event waits, no legacy
  // work): all zero already.
  const E = edgeFrom.length;
  const edgeStart = new Int32Array(n + 1);
  const to = new Int32Array(E);
  if (E > 0) {
    for (let j = 0; j < E; j++) edgeStart[edgeFrom[j]!]!++;
    for (let i = 0; i < n; i++) edgeStart[i + 1]! += edgeStart[i]!;
    for (let j = E - 1; j >= 0; j--) {
      to[--edgeStart[edgeFrom[j]!]!] = edgeTo[j]!;
      pending[edgeTo[j]!]!++;
    }
  }

  return {
    opStream,
    isLegacyStream,
    isBlockingStream,
    nextInStream,
    pending,
    edgeStart,
    edgeTo: to,
    legacy,
    waitFrom: Int32Array.from(waitIndex, (j) => edgeFrom[j]!),
    waitTo: Int32Array.from(waitIndex, (j) => edgeTo[j]!),
    waitRecordCall: Int32Array.from(waitRecordCall),
    waitCall: Int32Array.from(waitCall),
    barrierFrom: Int32Array.from(barrierIndex, (j) => edgeFrom[j]!),
    barrierTo: Int32Array.from(barrierIndex, (j) => edgeTo[j]!),
  };
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
