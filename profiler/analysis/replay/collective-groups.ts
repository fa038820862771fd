// Which computation each group of NCCL collectives waited for (issue 13,
// part 4): the serialized-collective rule (findings/serialized-collective.ts)
// and its what-if (whatif.ts: overlap-collectives) read the same groups.
//
// A data-parallel step computes its gradients and all-reduces them. Written
// by hand, the all-reduces are issued after the whole backward pass: every
// one of them waits for the last kernel of it, and the next step's
// computation waits for them, so communication runs alone. DDP instead
// issues each bucket's all-reduce as soon as that bucket's gradients are
// ready, on a side stream, and the all-reduce hides behind the backward
// pass of the next buckets. What the recording shows of the hand-written
// step is a *group*: consecutive NCCL kernels of one stream that all waited
// for the same operation (their *gate*), after a *segment* of computation
// on the gate's stream that the group had to wait out entirely.
//
// What a collective waited for is read from the replay's dependency graph
// of the recording (replay-graph.ts): its event waits (PyTorch runs
// asynchronous collectives on NCCL's own stream after a
// cudaStreamWaitEvent) and, where it runs on the compute stream itself
// (PyTorch ≥ 2.6 issues a blocking collective on the current stream), the
// operation before it in stream order. NCCL's own small copies (2.28
// uploads each kernel's arguments with a cudaMemcpyAsync on a stream of
// its own, which the kernel then waits for) are looked through: an
// operation on a stream that runs no kernel and whose operations only
// communication waited for is communication's, and what it waited for
// counts. The gate is the latest-issued operation so reached.
// A collective that reaches none belongs to the group of the collective
// before it on its stream. So does one separated from that collective only
// by a few short kernels on their stream (TAIL_KERNELS, each at most
// TAIL_NS): the previous collective's own post-processing, as a
// hand-written loop does it (`for p in params: dist.all_reduce(p.grad);
// p.grad /= world`: an all-reduce, a division of what it reduced, the next
// all-reduce), not computation the next one waited for.
//
// The segment of a group: the operations of the gate's stream before the
// gate, back to (not including) a communication operation or the gate of an
// earlier group, or back to (including) an operation that waited for
// communication — the first operation of the step, which waited for the
// previous step's collectives.
//
// What the recording cannot show is which data each collective reduces:
// the rule and the what-if assume, as a backward pass has it, that the
// j-th of n collectives reduces data ready after the first j/n of the
// segment's kernels.
import type { Host } from '../host.ts';
import { commKernelLabels, commKernelOps } from '../communication.ts';
import { IdTable } from '../../base/id-table.ts';
import { recordedGraph } from './replay-graph.ts';
import { OpKind, type Trace } from '../trace.ts';

export interface CollectiveGroup {
  pid: number;
  /** devices.id */
  device: number;
  /** The NCCL kernels of the group (op indices), in stream order. */
  collectives: number[];
  /** The operation they all waited for. */
  gate: number;
  /** The operations of the gate's stream the group waited out, in stream order, ending with the gate. */
  segment: number[];
  /** The compute kernels of the segment (op indices, stream order): where the what-if hangs each collective. */
  segmentKernels: number[];
  /** The collectives ran on the gate's stream (the computation's own). */
  sameStream: boolean;
  /**
   * Per collective, the operation right after it on its stream where that
   * is not a collective (its post-processing); after the last, whatever
   * follows the group there, a collective too. -1 for none.
   */
  followers: number[];
}

export interface CollectiveDependencies {
  groups: CollectiveGroup[];
  /** Per op: 1 for an NCCL kernel. */
  isComm: Uint8Array;
  /** The recorded event waits by target op (op → the ops it waited for). */
  waitsOf: Map<number, number[]>;
}

/** A group the what-if can spread (whatif.ts: overlap-collectives): several collectives after several kernels. */
export function canOverlap(g: CollectiveGroup): boolean {
  return g.collectives.length >= 2 && g.segmentKernels.length >= 2;
}

/** A segment longer than this is cut: enough for any step, bounded for a loop with no collectives in between. */
const SEGMENT_CAP = 100_000;
/** Kernels between two collectives of one stream that are the first one's post-processing (above): at most this many, each at most TAIL_NS long. */
const TAIL_KERNELS = 4;
const TAIL_NS = 100_000;

const cache = new WeakMap<Trace, CollectiveDependencies>();

/** The groups of a recording's NCCL collectives (none without NCCL kernels); computed once per trace. */
export function collectiveDependencies(trace: Trace, host: Host): CollectiveDependencies {
  let deps = cache.get(trace);
  if (deps) return deps;
  deps = findGroups(trace, host);
  cache.set(trace, deps);
  return deps;
}

/**
 * Whether the recording can have a group at all, read from its operations
 * alone. A collective's gate is what it waited for: an operation of an
 * event wait, or the operation before it on its stream. Without stream
 * waits (`hasWaits`: the host's, or any the recording holds) and with every
 * NCCL kernel on a stream that runs NCCL kernels only, it has neither, and
 * no group: the host model need not be built (nor, for a job read rank by
 * rank, the calls read).
 */
export function groupsPossible(trace: Trace, hasWaits: boolean): boolean {
  const labels = commKernelLabels(trace);
  if (labels.size === 0) return false;
  if (hasWaits) return true;
  const { length, stream } = trace.ops;
  const nccl = commKernelOps(trace);
  // Per stream (streams.id): 1 runs NCCL kernels, 2 runs anything else.
  const seen = IdTable.of(stream.subarray(0, length), 0);
  for (let i = 0; i < length; i++) {
    const s = stream[i]!;
    const was = seen.get(s);
    const now = was | (nccl[i] === 1 ? 1 : 2);
    if (now === 3) return true;
    if (now !== was) seen.set(s, now);
  }
  return false;
}

function findGroups(trace: Trace, host: Host): CollectiveDependencies {
  const { ops } = trace;
  const n = ops.length;
  const isComm = new Uint8Array(n);
  const labels = commKernelLabels(trace);
  if (labels.size === 0) return { groups: [], isComm, waitsOf: new Map() };
  for (let i = 0; i < n; i++) if (ops.kind[i] === OpKind.Kernel && labels.has(ops.detail[i]!)) isComm[i] = 1;
  if (!groupsPossible(trace, host.waits.length > 0)) return { groups: [], isComm, waitsOf: new Map() };

  const { model, graph } = recordedGraph(trace, host);
  const waitsOf = new Map<number, number[]>();
  for (let j = 0; j < graph.waitTo.length; j++) {
    const to = graph.waitTo[j]!;
    const list = waitsOf.get(to);
    if (list) list.push(graph.waitFrom[j]!);
    else waitsOf.set(to, [graph.waitFrom[j]!]);
  }
  const { nextInStream } = graph;
  const prev = new Int32Array(n).fill(-1);
  for (let i = 0; i < n; i++) if (nextInStream[i]! >= 0) prev[nextInStream[i]!] = i;
  const pos = new Int32Array(n);
  for (let p = 0; p < n; p++) pos[model.order[p]!] = p;
  const waitedForComm = (i: number) => (waitsOf.get(i) ?? []).some((f) => isComm[f] === 1);

  // Communication's own operations (see above): on a stream without kernels whose operations only communication waited for.
  const kernelStreams = new Set<number>();
  for (let i = 0; i < n; i++) if (ops.kind[i] === OpKind.Kernel) kernelStreams.add(ops.stream[i]!);
  const supportStreams = new Map<number, boolean>(); // stream → waited for by communication only (so far)
  for (let j = 0; j < graph.waitTo.length; j++) {
    const stream = ops.stream[graph.waitFrom[j]!]!;
    if (kernelStreams.has(stream)) continue;
    supportStreams.set(stream, isComm[graph.waitTo[j]!] === 1 && supportStreams.get(stream) !== false);
  }
  const isSupport = (i: number) => supportStreams.get(ops.stream[i]!) === true;
  const depsOf = (i: number) => (prev[i]! >= 0 ? [...(waitsOf.get(i) ?? []), prev[i]!] : (waitsOf.get(i) ?? []));
  /** The latest-issued operation k waited for that is neither communication nor its support, looking through support. */
  const gateOf = (k: number): number => {
    let gate = -1;
    const todo = [...depsOf(k)];
    const seen = new Set<number>();
    while (todo.length && seen.size < 256) {
      const f = todo.pop()!;
      if (seen.has(f) || isComm[f]) continue;
      seen.add(f);
      if (isSupport(f)) for (const d of depsOf(f)) todo.push(d);
      else if (gate < 0 || pos[f]! > pos[gate]!) gate = f;
    }
    return gate;
  };

  const groups: CollectiveGroup[] = [];
  const groupOf = new Map<number, CollectiveGroup>(); // NCCL op → its group
  const isGate = new Uint8Array(n);
  for (let p = 0; p < n; p++) {
    const k = model.order[p]!;
    if (!isComm[k]) continue;
    let gate = gateOf(k);
    // The collective before it on its stream, through the post-processing of that one.
    let before = prev[k]!;
    for (let t = 0; t < TAIL_KERNELS && before >= 0 && !isComm[before]; t++) {
      if (ops.kind[before] !== OpKind.Kernel || ops.end[before]! - ops.start[before]! > TAIL_NS || waitedForComm(before)) break;
      before = prev[before]!;
    }
    const previousGroup = before >= 0 && isComm[before] ? groupOf.get(before) : undefined;
    // It reached nothing, or follows the previous collective's post-processing: that collective's group.
    if (previousGroup && (gate < 0 || before !== prev[k])) gate = previousGroup.gate;
    if (gate < 0) continue;
    if (previousGroup && previousGroup.gate === gate) {
      previousGroup.collectives.push(k);
      groupOf.set(k, previousGroup);
      continue;
    }
    // A new group: the segment it waited out.
    const segment: number[] = [];
    for (let i = gate; i >= 0 && segment.length < SEGMENT_CAP; i = prev[i]!) {
      if (isComm[i] || (i !== gate && isGate[i])) break;
      segment.push(i);
      if (waitedForComm(i)) break;
    }
    segment.reverse();
    const group: CollectiveGroup = {
      pid: ops.pid[k]!,
      device: ops.device[k]!,
      collectives: [k],
      gate,
      segment,
      segmentKernels: segment.filter((i) => ops.kind[i] === OpKind.Kernel),
      sameStream: ops.stream[k] === ops.stream[gate],
      followers: [],
    };
    isGate[gate] = 1;
    groups.push(group);
    groupOf.set(k, group);
  }
  for (const g of groups) {
    const last = g.collectives.length - 1;
    g.followers = g.collectives.map((c, j) => (nextInStream[c]! >= 0 && (j === last || !isComm[nextInStream[c]!]) ? nextInStream[c]! : -1));
  }
  return { groups, isComm, waitsOf };
}
