// What-if estimates: remove one cause of serialization, replay the recording
// (replay.ts), and compare. Each fix is a transformation of the replay's
// input, made the way a user would make it in the program. Each has one id
// (FixId, contract/findings.ts), which the findings name:
//  * pin-pageable: pageable copies become async copies from pinned
//    memory — they run at the pinned bandwidth (bandwidth.ts; slower where
//    they overlap the other direction, like any pinned copy), their call
//    returns after an ordinary async call's CPU time instead of blocking,
//    and the pageable staging delay before the copy starts is gone;
//  * move-default-stream: work on the legacy default stream goes to the
//    stream its thread last issued work to before it (the stream the user
//    would have passed), or a fresh non-blocking stream, and with that
//    loses the legacy stream's implicit synchronization;
//  * remove-host-blocking: the explicit synchronize calls between launches
//    no longer wait (they keep their own CPU time); the syncs after a
//    thread's last launch stay, since a program needs them before it
//    reads its results;
//  * overlap-collectives: each group of NCCL collectives that waited for a
//    whole stretch of computation (collective-groups.ts) is issued the way
//    DDP issues its buckets: the j-th of n collectives waits only for the
//    first j/n of the stretch's kernels (the last one still for all of
//    it), on a side stream where it ran on the computation's own; what
//    came after the group still waits for all of it. NCCL's blocks hold
//    SMs while they run, so a second replay slows the computation that
//    overlapped a collective in the first: more waves of its blocks on the
//    SMs left (slowedBesideComm). The collectives keep their durations;
//  * hoist-alloc, hoist-pinned-alloc, hoist-register: the
//    device allocations, pinned host allocations or host registrations a
//    thread makes between its first and last launch move out of the loop
//    (allocated or pinned once, before it): in the loop they take no host
//    time and no longer wait for the device. Which calls each fix takes is
//    their family in call-families.ts; the host-blocking rule names the
//    fix for the family a finding is about (fixForFamily).
// The prediction is the replay of the changed input, as it comes out: no
// scaling by the replay's error on the unchanged recording (the tests hold
// that error to a few percent instead); `replayedNs` reports it.
import type { Ns } from '../../contract/time.ts';
import { bandwidthFor, pinnedBandwidth, type BandwidthReference, type PinnedBandwidth } from '../bandwidth.ts';
import { blocksOnDevice, familiesByNameId, type BlockingFamily } from '../../cuda/call-families.ts';
import { canOverlap, collectiveDependencies } from './collective-groups.ts';
import { FIX_IDS, type CallFamily, type FixId } from '../../contract/findings.ts';
import type { Host } from '../host.ts';
import { busyWithin, unionOfPairs, type IntervalList } from '../intervals.ts';
import { blocksPerSm } from '../occupancy.ts';
import { flatThreadCalls, replay, type ReplayOptions, type ReplayResult } from './replay.ts';
import { captureGraphsNatively } from '../../native/addon.ts';
import { issuingCalls, readbacks, syncsRightAfter } from './copy-idioms.ts';
import type { PcieLink } from '../load/tables.ts';
import { hostModel, isPageableCopy, WaitKind } from './replay-host.ts';
import { OpCategory, OpKind, type Trace } from '../trace.ts';
import { StreamFlags } from '../../store/enums.ts';
import { THREAD_LANE_FACTOR } from '../../store/zone-tables.ts';

/** Streams the split-streams fix deals chunks over: as many as the runner's concurrent scenario gives its eight chunks. */
export const SPLIT_STREAMS = 8;

interface FixSpec {
  /** What the replay changes, as a finding's whatIf.fix says it. */
  label: string;
  /** The replay's input changed by the fix, or why it does not apply. */
  apply: (trace: Trace, host: Host, options: EstimateOptions) => Applied;
  /** Fixes that take away host-blocking calls: their family (call-families.ts) and what the notes call them. */
  blocking?: { family: BlockingFamily; calls: string };
}

function blockingFix(family: BlockingFamily, calls: string, label: string): FixSpec {
  return { label, apply: (trace, host) => removeBlockingCalls(trace, host, family), blocking: { family, calls } };
}

/** Every fix, by its id. */
const FIXES: Record<FixId, FixSpec> = {
  'pin-pageable': {
    label: 'pageable copies pinned (at the measured pinned bandwidth)',
    apply: (trace, host, options) => pinPageableCopies(trace, host, pinnedBandwidth(trace, options.pcieLinks, options.reference)),
  },
  'defer-readback': { label: 'readbacks issued without waiting, read once after the loop', apply: (trace, host) => deferReadbacks(trace, host) },
  'move-default-stream': { label: "default-stream work moved to its chunk's stream", apply: (trace, host) => moveDefaultStreamWork(trace, host) },
  'remove-host-blocking': blockingFix('sync', 'synchronize', 'host synchronization between launches removed'),
  'hoist-alloc': blockingFix('alloc', 'device allocation', 'device allocations between launches moved before the loop'),
  'hoist-pinned-alloc': blockingFix('pinned-alloc', 'pinned host allocation', 'pinned host allocations between launches moved before the loop'),
  'hoist-register': blockingFix('register', 'host registration', 'host memory pinned once before the loop instead of registered between launches'),
  'overlap-collectives': {
    label: 'each collective issued as soon as its share of the computation is done, on a side stream',
    apply: (trace, host) => overlapCollectives(trace, host),
  },
  'cuda-graph': {
    label: 'each run of short kernel launches captured in a CUDA graph, one launch a run',
    apply: (trace, host) => captureGraphs(trace, host),
  },
  'split-streams': {
    label: `the work split by chunk over up to ${SPLIT_STREAMS} streams (each chunk's copy in, kernels and copy out on one stream)`,
    apply: (trace, host) => splitStreams(trace, host),
  },
};

/** What the fix changes, as people read it (a finding's whatIf.fix). */
export function fixLabel(fix: FixId): string {
  return FIXES[fix].label;
}

export interface EstimateOptions {
  /** Measured pinned bandwidth from another recording, used where this one has no pinned copies of its own. */
  reference?: BandwidthReference;
  /** The devices' PCIe links as the recording's file stores them (load/tables.ts readPcieLinks): pinnedBandwidth takes them where the loaded devices lack them. */
  pcieLinks?: PcieLink[];
  /** Where given, the replay with the fix is kept here, by fix (attribution.ts shares a range's findings out among its parts by it). */
  replays?: Map<FixId, ReplayResult>;
  /**
   * false: no replay of the unchanged recording, so no replayedNs and no
   * note on the model's error (default: replayed, once per recording). The
   * diagnosis reads neither, only the prediction: on 10 M operations that
   * replay was ~1.8 s of its ~7 s.
   */
  unchangedReplay?: boolean;
}

export interface Estimate {
  fix: FixId;
  /** GPU span as recorded: first op start → last op end. */
  measuredNs: Ns;
  /** The replay of the unchanged recording (how faithful the model is for this recording); absent with unchangedReplay: false. */
  replayedNs?: Ns;
  /** GPU span of the replay with the fix applied. */
  predictedNs: Ns;
  /** measuredNs − predictedNs, never below 0. */
  savedNs: Ns;
  /** First op issue → last op end: recorded, and replayed with the fix. */
  makespan: { measuredNs: Ns; predictedNs: Ns };
  notes: string[];
}

/**
 * A fix applied: the replay options, or why it does not apply. `refine`,
 * where given, derives the options of a second replay from the first one's
 * result (what the fix changes depends on what then runs side by side).
 */
export type Applied = { options: ReplayOptions; notes: string[]; refine?: (first: ReplayResult) => ReplayOptions } | { unavailable: string };

/** What a freed call still costs when the recording has no async copy call to measure: 3–10 µs in the concurrent fixtures. */
const ASYNC_CALL_NS = 5_000;

export function pinPageableCopies(trace: Trace, host: Host, bandwidth: PinnedBandwidth[]): Applied {
  const reads = new Set(readbacks(trace, host).ops);
  return releaseCopies(trace, host, (i) => isPageableCopy(trace, i) && !reads.has(i), bandwidth);
}

/**
 * The readback fix: small copies back to pageable host memory (`.item()`,
 * `.cpu()` of a scalar, `asnumpy` of a few values) no longer hold the host
 * until everything queued before them is done, nor does the synchronize
 * right after each (syncsRightAfter): the value stays on the GPU and is
 * read once after the loop, or is copied non_blocking and read a step
 * later. The copies keep their recorded times on the GPU.
 */
export function deferReadbacks(trace: Trace, host: Host): Applied {
  const reads = new Set(readbacks(trace, host).ops);
  return releaseCopies(trace, host, (i) => reads.has(i), null);
}

/**
 * Copies that held the host (selected by `which`) issued without waiting:
 * their async calls return after an ordinary async call's CPU time, the
 * synchronize that followed each goes too (syncsRightAfter), and with
 * `bandwidth` they run at the pinned rate of their direction (else as
 * recorded).
 */
function releaseCopies(trace: Trace, host: Host, which: (i: number) => boolean, bandwidth: PinnedBandwidth[] | null): Applied {
  const { ops } = trace;
  // The copies' pinned rate, durations (NaN: as recorded) and pinned flags:
  // only with `bandwidth` (the readback fix keeps the copies as recorded,
  // and no per-op arrays that would say so).
  const rate = bandwidth && { bandwidth, duration: new Float64Array(ops.length).fill(NaN), pinned: new Uint8Array(ops.length) };
  const lagUnknown = new Uint8Array(ops.length);
  const freed = new Uint8Array(host.calls.length);
  const callDuration = new Float64Array(host.calls.length).fill(NaN);
  const callNs = asyncCallNs(trace, host);
  const used = new Map<string, PinnedBandwidth>();
  let count = 0;
  let syncCopies = 0;
  for (let i = 0; i < ops.length; i++) {
    if (!which(i)) continue;
    if (rate) {
      const direction = ops.category[i] === OpCategory.HtoD ? 'HtoD' : 'DtoH';
      const bw = bandwidthFor(rate.bandwidth, ops.device[i]!, direction);
      if (!bw || bw.gbPerS === null) {
        return {
          unavailable: `no pinned ${direction} bandwidth for device ${ops.device[i]}: the recording has no large pinned copies, its devices no PCIe link, and no reference was given`,
        };
      }
      used.set(`${bw.deviceId}:${direction}`, bw);
      // Uncontended: the replay slows it down where it overlaps the other direction.
      rate.duration[i] = ops.bytes[i]! / bw.gbPerS;
      rate.pinned[i] = 1;
    }
    // Its recorded lag was the wait for the work queued before it (a readback) or the staging.
    lagUnknown[i] = 1;
    const k = host.opCall[i]!;
    if (k >= 0 && ops.isAsync[i]) {
      freed[k] = 1;
      // A pageable copy's call held the host; an async call to pinned memory takes what it took.
      if (isPageableCopy(trace, i)) callDuration[k] = callNs;
    } else if (k >= 0) syncCopies++;
    count++;
  }
  if (count === 0) return { unavailable: bandwidth ? 'no copies from or to pageable memory' : 'no reads of values back to the host' };
  const after = syncsRightAfter(host, freed);
  for (const k of after) freed[k] = 1;
  const notes = [
    bandwidth
      ? `${count} pageable copies pinned; async copy calls return after ${(callNs / 1000).toFixed(1)} µs`
      : `${count} readbacks issued without waiting (async copy calls return after ${(callNs / 1000).toFixed(1)} µs); the values are read once the loop is done`,
  ];
  if (after.length)
    notes.push(
      `${after.length} synchronize calls right after those copies no longer wait: the copy idioms that make them (PyTorch's .cuda() / .to() without non_blocking, .item(), .cpu(); CuPy's get() / asnumpy) become non_blocking copies, waited for once where the host needs the data`,
    );
  for (const b of used.values())
    notes.push(
      `device ${b.deviceId} ${b.direction}: ${b.gbPerS!.toFixed(1)} GB/s (${b.source === 'recording' ? `median of ${b.copies} pinned copies in this recording` : b.source === 'reference' ? 'measured pinned bandwidth from another recording' : 'PCIe link × 0.806'})`,
    );
  if (syncCopies) notes.push(`${syncCopies} synchronous copies stay synchronous (cudaMemcpy blocks with pinned memory too)${bandwidth ? ', only faster' : ''}`);
  return { options: { duration: rate?.duration, pinned: rate?.pinned, lagUnknown, freed, callDuration }, notes };
}

/**
 * The single-stream fix: each process that put all its work on a device on
 * one stream has that work cut into chunks, each starting where a copy to
 * the device follows other work (a chunk's copy in, its kernels, its copy
 * out), dealt round-robin over SPLIT_STREAMS fresh non-blocking streams.
 * Assumes the chunks are independent, as the chunked pipelines the finding
 * is about are (each reads its own input); a loop whose steps depend on
 * each other (a training loop) can overlap only its copies, by prefetching
 * them on a side stream. Host calls stay as recorded: a synchronize
 * between chunks still waits, for its own stream's work. Pageable copies
 * stay pageable, and still hold the host.
 */
export function splitStreams(trace: Trace, host: Host): Applied {
  const { ops } = trace;
  const m = hostModel(trace, host);
  // Processes × devices whose ops all ran on one stream.
  const only = new Map<number, number>(); // pid * 4096 + device → its stream, or -1 for several
  for (let i = 0; i < ops.length; i++) {
    const key = ops.pid[i]! * 4096 + ops.device[i]!;
    const s = only.get(key);
    if (s === undefined) only.set(key, ops.stream[i]!);
    else if (s !== ops.stream[i]) only.set(key, -1);
  }
  const stream = ops.stream.slice();
  const streamFlags = new Map<number, number>();
  let nextId = firstFreeStreamId(trace);
  const state = new Map<number, { fresh: number[]; chunk: number; prevHtoD: boolean }>();
  let moved = 0;
  let chunks = 0;
  for (let p = 0; p < m.order.length; p++) {
    const i = m.order[p]!;
    const key = ops.pid[i]! * 4096 + ops.device[i]!;
    if (only.get(key)! < 0) continue;
    let st = state.get(key);
    if (!st) state.set(key, (st = { fresh: [], chunk: -1, prevHtoD: false }));
    const htod = ops.kind[i] === OpKind.Memcpy && ops.category[i] === OpCategory.HtoD;
    // The first op, and each copy to the device after other work, begins a chunk.
    if (st.chunk < 0 || (htod && !st.prevHtoD)) {
      st.chunk++;
      chunks++;
    }
    st.prevHtoD = htod;
    const slot = st.chunk % SPLIT_STREAMS;
    while (st.fresh.length <= slot) {
      streamFlags.set(nextId, StreamFlags.NonBlocking);
      st.fresh.push(nextId++);
    }
    stream[i] = st.fresh[slot]!;
    moved++;
  }
  if (moved === 0 || chunks <= state.size) return { unavailable: 'no process ran chunks of work on a single stream' };
  return {
    options: { stream, streamFlags },
    notes: [
      `${moved} operations in ${chunks} chunks (each from a copy to the device to the next) dealt over up to ${SPLIT_STREAMS} fresh streams per process and device`,
      'assumes the chunks are independent of each other, as a chunked pipeline is; where each step needs the one before (a training loop), only prefetching the next copy on a side stream overlaps',
    ],
  };
}

/** A stream id no stream of the recording has: where a fix's fresh streams start. */
function firstFreeStreamId(trace: Trace): number {
  let id = 1;
  for (const s of trace.streams) id = Math.max(id, s.id + 1);
  for (let i = 0; i < trace.ops.length; i++) id = Math.max(id, trace.ops.stream[i]! + 1);
  return id;
}

export function moveDefaultStreamWork(trace: Trace, host: Host): Applied {
  const { ops } = trace;
  const m = hostModel(trace, host);
  const rows = new Map(trace.streams.map((s) => [s.id, s]));
  const isLegacy = (id: number) => ((rows.get(id)?.flags ?? 0) & StreamFlags.LegacyDefault) !== 0;
  const stream = ops.stream.slice();
  const streamFlags = new Map<number, number>();
  let nextId = firstFreeStreamId(trace);
  const lastStream = new Map<number, number>(); // thread key → stream it last issued to
  const fresh = new Map<number, number>(); // thread key → fresh stream
  let moved = 0;
  let toFresh = 0;
  for (let p = 0; p < m.order.length; p++) {
    const i = m.order[p]!;
    const k = host.opCall[i]!;
    // pid and tid both fit below 2^22 (host.ts); ops without a call: their process.
    const thread = k >= 0 ? host.calls.pid[k]! * THREAD_LANE_FACTOR + host.calls.tid[k]! : -1 - ops.pid[i]!;
    if (!isLegacy(ops.stream[i]!)) {
      lastStream.set(thread, ops.stream[i]!);
      continue;
    }
    let target = lastStream.get(thread);
    if (target === undefined) {
      target = fresh.get(thread);
      if (target === undefined) {
        fresh.set(thread, (target = nextId++));
        // A fresh stream stays in the context its ops were recorded in (the replay keeps each op's context).
        streamFlags.set(target, StreamFlags.NonBlocking); // cudaStreamNonBlocking
      }
      toFresh++;
    }
    stream[i] = target;
    moved++;
  }
  if (moved === 0) return { unavailable: 'no work on the legacy default stream' };
  const notes = [
    `${moved} operations moved off the legacy default stream${toFresh ? ` (${toFresh} to a fresh non-blocking stream: their thread had issued nothing to another stream before)` : ''}`,
  ];
  return { options: { stream, streamFlags }, notes };
}

export function overlapCollectives(trace: Trace, host: Host): Applied {
  const { ops } = trace;
  const { groups, waitsOf, isComm } = collectiveDependencies(trace, host);
  const spread = groups.filter(canOverlap);
  if (spread.length === 0) return { unavailable: 'no group of collectives waited for a stretch of computation it could overlap' };
  const waitFor = new Map<number, number[]>();
  let stream: Int32Array | undefined;
  const streamFlags = new Map<number, number>();
  const side = new Map<number, number>(); // computation's stream → its side stream
  let nextId = firstFreeStreamId(trace);
  let moved = 0;
  for (const g of spread) {
    const n = g.collectives.length;
    const kernels = g.segmentKernels;
    const inSegment = new Set(g.segment);
    g.collectives.forEach((k, j) => {
      const gate = j === n - 1 ? g.gate : kernels[Math.ceil(((j + 1) * kernels.length) / n) - 1]!;
      // Its recorded waits on other work than the stretch stay.
      waitFor.set(k, [gate, ...(waitsOf.get(k) ?? []).filter((f) => !inSegment.has(f))]);
    });
    if (g.sameStream) {
      stream ??= ops.stream.slice();
      const from = ops.stream[g.collectives[0]!]!;
      let to = side.get(from);
      if (to === undefined) {
        side.set(from, (to = nextId++));
        streamFlags.set(to, StreamFlags.NonBlocking);
      }
      for (const k of g.collectives) stream[k] = to;
      // What followed each collective on the computation's stream (its
      // post-processing; after the last, what followed the group) waited
      // for it there: it still does.
      g.collectives.forEach((k, j) => {
        const f = g.followers[j]!;
        if (f >= 0) waitFor.set(f, [...(waitFor.get(f) ?? waitsOf.get(f) ?? []), k]);
      });
    }
    moved += n;
  }
  const notes = [
    `${moved} collectives in ${spread.length} groups each issued after its share of the computation before it${side.size ? ' (on a side stream)' : ''}; the last of each group still waits for all of it`,
    'assumes the j-th of n collectives reduces data ready after the first j/n of the kernels before them, as gradients are in a backward pass',
  ];
  const options: ReplayOptions = { waitFor, ...(stream ? { stream, streamFlags } : {}) };
  const footprint = commFootprint(trace, isComm);
  for (const [device, sms] of footprint)
    notes.push(
      `computation beside the collectives on device ${device} has the SMs NCCL's blocks leave it (they hold ${sms}): its kernels need more waves of blocks while they overlap`,
    );
  return { options, notes, refine: (first) => ({ ...options, duration: slowedBesideComm(trace, first, isComm, footprint) }) };
}

/**
 * Per device, how many of its SMs its NCCL kernels hold while they run:
 * each block of a collective stays resident, spinning on its peers' data,
 * for the kernel's whole length (one block per channel; NCCL's shared
 * memory use lets one sit on an SM), so the computation beside it has the
 * other SMs only. The largest kernel's, at most 90% of the SMs.
 */
export function commFootprint(trace: Trace, isComm: Uint8Array): Map<number, number> {
  const { ops } = trace;
  const devices = new Map(trace.devices.map((d) => [d.id, d]));
  const held = new Map<number, number>();
  for (let i = 0; i < ops.length; i++) {
    if (!isComm[i]) continue;
    const dev = devices.get(ops.device[i]!);
    if (!dev?.smCount || ops.blocks[i]! <= 0) continue;
    const sms = Math.ceil(ops.blocks[i]! / blocksPerSm(dev, ops.blockThreads[i]!, ops.registers[i]!, ops.sharedBytes[i]!));
    held.set(dev.id, Math.min(Math.floor(0.9 * dev.smCount), Math.max(held.get(dev.id) ?? 0, sms)));
  }
  return held;
}

/**
 * Durations for a second replay: each compute kernel that overlapped NCCL
 * kernels of its device in the first one runs slower while it does, by the
 * waves its blocks need on the SMs left to it against the waves on all of
 * them: a GEMM whose 128 blocks fill 128 of 132 SMs in one wave needs two
 * beside a collective that holds 24 (half speed), a kernel of many waves
 * about 108 / 132 of its speed. Beside the collective for t ns it gets
 * t / factor of its work done and finishes the rest after: t (1 − 1 /
 * factor) later. Seen on two H200s (test/gpu/nccl.test.ts): the GEMMs
 * beside NCCL's all-reduces ran at 0.43 of their speed alone, the waves'
 * 0.5 and the collective's memory traffic.
 */
function slowedBesideComm(trace: Trace, first: ReplayResult, isComm: Uint8Array, held: Map<number, number>): Float64Array {
  const { ops } = trace;
  const n = ops.length;
  const devices = new Map(trace.devices.map((d) => [d.id, d]));
  // When the collectives ran in the first replay, per device: one pass over the ops.
  const spans = new Map<number, { starts: number[]; ends: number[] }>();
  for (let i = 0; i < n; i++) {
    if (!isComm[i] || !held.has(ops.device[i]!)) continue;
    let d = spans.get(ops.device[i]!);
    if (!d) spans.set(ops.device[i]!, (d = { starts: [], ends: [] }));
    d.starts.push(first.start[i]!);
    d.ends.push(first.end[i]!);
  }
  const busy = new Map<number, IntervalList>([...spans].map(([device, d]) => [device, unionOfPairs(d.starts, d.ends)]));
  const duration = new Float64Array(n).fill(NaN);
  for (let i = 0; i < n; i++) {
    if (ops.kind[i] !== OpKind.Kernel || isComm[i]) continue;
    const c = held.get(ops.device[i]!);
    const dev = devices.get(ops.device[i]!);
    if (!c || !dev?.smCount || ops.blocks[i]! <= 0) continue;
    const overlapped = busyWithin(busy.get(ops.device[i]!)!, first.start[i]!, first.end[i]!);
    if (overlapped <= 0) continue;
    const perWave = blocksPerSm(dev, ops.blockThreads[i]!, ops.registers[i]!, ops.sharedBytes[i]!);
    const waves = (sms: number) => Math.ceil(ops.blocks[i]! / (sms * perWave));
    const factor = waves(dev.smCount - c) / waves(dev.smCount);
    // Beside the collective for `overlapped` ns it does 1 / factor of that work; the rest comes after.
    duration[i] = ops.end[i]! - ops.start[i]! + overlapped * (1 - 1 / factor);
  }
  return duration;
}

/**
 * What a CUDA graph costs, measured on an H200 (test/fixtures/corpus/
 * torch-launch-bound-graphs, fix.sqlite: 40 kernel nodes replayed 300
 * times): cudaGraphLaunch held the host 38.7 µs (median), about 1 µs a
 * node; on the GPU a node began 256 ns after the one before it ended
 * (median; p90 288 ns), where a kernel launched on its own waits for its
 * launch call.
 */
const GRAPH_LAUNCH_NS_PER_NODE = 1_000;
const GRAPH_LAUNCH_MIN_NS = 5_000;
const GRAPH_NODE_GAP_NS = 256;
/** A run of fewer kernels than this is not worth a graph (the finding's threshold is per device: launch-bound.ts). */
const MIN_GRAPH_KERNELS = 8;

/**
 * The launch-bound fix: each run of kernel launches a thread makes with
 * nothing else between them that issues GPU work or waits (a training or
 * inference step between its copies and synchronizations) is captured
 * once and replayed as a graph. The run's first call becomes the
 * cudaGraphLaunch (GRAPH_LAUNCH_NS_PER_NODE per kernel); the host time
 * between the run's calls and the calls themselves (the framework's
 * dispatch, cudaGetDevice and the like, each cudaLaunchKernel) are gone;
 * on the GPU each kernel begins GRAPH_NODE_GAP_NS after the one before
 * it. Runs count where they hold MIN_GRAPH_KERNELS kernels and at least
 * half are shorter than the recording's median launch call (the
 * launch-bound finding's measure). Calls outside the runs (the step's
 * input copy, NVTX aside, the Python loop's own time before the run's
 * first call) stay as recorded: the graph does not remove them.
 */
export function captureGraphs(trace: Trace, host: Host): Applied {
  const { ops } = trace;
  const m = hostModel(trace, host);
  const threads = flatThreadCalls(m);
  const nc = host.calls.length;
  const callGap = new Float64Array(nc);
  const callDuration = new Float64Array(nc);
  const afterLatency = new Float64Array(ops.length);
  // Its passes over every op and call, native (native/addon/src/graph_capture.cc: ~0.5 s of JavaScript at 10 M).
  const r = captureGraphsNatively({
    ops: ops.length,
    calls: nc,
    threads: m.threadCalls.length,
    minKernels: MIN_GRAPH_KERNELS,
    launchNsPerNode: GRAPH_LAUNCH_NS_PER_NODE,
    launchMinNs: GRAPH_LAUNCH_MIN_NS,
    nodeGapNs: GRAPH_NODE_GAP_NS,
    kind: ops.kind,
    opStart: ops.start,
    opEnd: ops.end,
    opCall: host.opCall,
    callStart: host.calls.start,
    callEnd: host.calls.end,
    outer: m.outer,
    waitKind: m.waitKind,
    order: m.order,
    threadStart: threads.start,
    threadCalls: threads.calls,
    callGap,
    callDuration,
    afterLatency,
  });
  if (r.launches < MIN_GRAPH_KERNELS) return { unavailable: 'too few kernel launches to capture' };
  const graphs = r.graphs!;
  const captured = r.captured!;
  const hostNs = r.hostNs!;
  if (graphs === 0) return { unavailable: `no run of ${MIN_GRAPH_KERNELS} or more kernel launches, most of them shorter than their launch` };
  const ms = (ns: number) => (ns / 1e6).toFixed(2);
  return {
    options: { callGap, callDuration, afterLatency },
    notes: [
      `${captured} kernels in ${graphs} runs captured as CUDA graphs: each run one cudaGraphLaunch (about ${(GRAPH_LAUNCH_NS_PER_NODE / 1000).toFixed(0)} µs of host time a node), ${ms(Math.max(0, hostNs))} ms of host time between and in their launch calls gone; nodes ${GRAPH_NODE_GAP_NS} ns apart on the GPU (measured on an H200)`,
      'assumes each run is the same work every time (what capture needs: fixed shapes, no host synchronization inside), as a training or inference step is',
    ],
  };
}

/** The what-if fix that takes away the host-blocking calls of this family; undefined for families no fix removes. */
export function fixForFamily(family: CallFamily): FixId | undefined {
  return blocksOnDevice(family) ? FIX_IDS.find((id) => FIXES[id].blocking?.family === family) : undefined;
}

/**
 * Takes the calls of one blocking family out from between a thread's
 * launches. A synchronize call stays where it is but no longer waits (the
 * program still makes it, or waits on an event instead: its CPU time
 * stays); it is freed only where the recording shows it waited, from the
 * thread's first call on. An allocation or registration call moves out of
 * the loop altogether: from between the thread's first and last launch it
 * is gone, its host time with its implicit wait (before the first launch
 * it already is outside the loop).
 */
export function removeBlockingCalls(trace: Trace, host: Host, family: BlockingFamily): Applied {
  const m = hostModel(trace, host);
  const families = familiesByNameId(host.names);
  const issuing = issuingCalls(host);
  const hoist = family !== 'sync';
  // The synchronize calls of reads of values are the readback fix's (defer-readback), not this one's.
  const readbackSyncs = hoist ? null : readbacks(trace, host).syncs;
  const freed = new Uint8Array(host.calls.length);
  const callDuration = hoist ? new Float64Array(host.calls.length).fill(NaN) : undefined;
  let count = 0;
  let waitedNs = 0;
  let hostNs = 0;
  for (const list of host.threads.values()) {
    // Calls after the thread's last launch stay: a program needs its last
    // sync before it reads its results, and frees after its loop.
    let first = -1;
    let last = -1;
    for (let j = 0; j < list.length; j++)
      if (issuing[list[j]!]) {
        if (first < 0) first = j;
        last = j;
      }
    for (let j = hoist ? first + 1 : 0; j < last; j++) {
      const k = list[j]!;
      if (m.outer[k] !== k || families.family(host.calls.nameId[k]!) !== family || readbackSyncs?.[k]) continue;
      const waited = m.waitKind[k] !== WaitKind.None;
      if (!hoist && !waited) continue;
      freed[k] = 1;
      if (callDuration) callDuration[k] = 0;
      count++;
      const duration = host.calls.end[k]! - host.calls.start[k]!;
      if (waited) waitedNs += duration - m.cost[k]!;
      hostNs += duration;
    }
  }
  const calls = FIXES[fixForFamily(family)!].blocking!.calls;
  if (count === 0) return { unavailable: `no ${calls} calls between launches` };
  const ms = (ns: number) => (ns / 1e6).toFixed(3);
  return {
    options: callDuration ? { freed, callDuration } : { freed },
    notes: [
      hoist
        ? `${count} ${calls} calls between launches moved before the loop (they took ${ms(hostNs)} ms of host time in the recording, ${ms(waitedNs)} ms of it waiting for the device)`
        : `${count} ${calls} calls between launches no longer wait (they waited ${ms(waitedNs)} ms in the recording)`,
    ],
  };
}

/** GPU span of the unchanged replay, once per recording (the diagnosis asks for one estimate per fix). */
const baseSpans = new WeakMap<Host, number>();
function baseReplay(trace: Trace, host: Host): number {
  let span = baseSpans.get(host);
  if (span === undefined) baseSpans.set(host, (span = replay(trace, host).gpuSpanNs));
  return span;
}

/** Median CPU time of this recording's async copy calls that did not block, else ASYNC_CALL_NS. */
function asyncCallNs(trace: Trace, host: Host): number {
  const m = hostModel(trace, host);
  const d: number[] = [];
  for (let i = 0; i < trace.ops.length; i++) {
    const k = host.opCall[i]!;
    if (k < 0 || !trace.ops.isAsync[i] || trace.ops.kind[i] !== 2 || isPageableCopy(trace, i) || m.waitKind[k] !== WaitKind.None) continue;
    d.push(host.calls.end[k]! - host.calls.start[k]!);
  }
  if (d.length < 3) return ASYNC_CALL_NS;
  d.sort((a, b) => a - b);
  return d[Math.floor(d.length / 2)]!;
}

export function applyFix(trace: Trace, host: Host, fix: FixId, options: EstimateOptions = {}): Applied {
  return FIXES[fix].apply(trace, host, options);
}

/** The replay of a fix applied (its second replay, where the fix refines its options from the first). */
function replayApplied(trace: Trace, host: Host, applied: Exclude<Applied, { unavailable: string }>): ReplayResult {
  const first = replay(trace, host, applied.options);
  return applied.refine ? replay(trace, host, applied.refine(first)) : first;
}

/**
 * What the recording measured, that every fix's estimate is set against:
 * its first op's start, its last op's end, and the first op's issue (its
 * call's start, else its own). Once per recording (a WeakMap on its host).
 */
export interface RecordedSpan {
  startNs: Ns;
  endNs: Ns;
  firstIssueNs: Ns;
}
const recordedSpans = new WeakMap<Host, RecordedSpan>();
export function recordedSpan(trace: Trace, host: Host): RecordedSpan {
  const known = recordedSpans.get(host);
  if (known) return known;
  const { ops } = trace;
  let s = Infinity;
  let e = -Infinity;
  let firstIssue = Infinity;
  for (let i = 0; i < ops.length; i++) {
    if (ops.start[i]! < s) s = ops.start[i]!;
    if (ops.end[i]! > e) e = ops.end[i]!;
    const k = host.opCall[i]!;
    const issue = k >= 0 ? host.calls.start[k]! : ops.start[i]!;
    if (issue < firstIssue) firstIssue = issue;
  }
  const span = { startNs: s, endNs: e, firstIssueNs: firstIssue };
  recordedSpans.set(host, span);
  return span;
}

/**
 * The part of an estimate that replays: the fix applied and replayed (and,
 * unless unchangedReplay is false, the unchanged recording too). What a
 * second thread makes (diagnosis/whatif-thread.ts) while the diagnosing one
 * measures the recorded span; estimateOf puts the two together.
 */
export interface Prediction {
  fix: FixId;
  gpuSpanNs: Ns;
  makespanNs: Ns;
  /** The unchanged recording's replayed GPU span, where replayed. */
  replayedNs?: Ns;
  notes: string[];
}

export function tryPredict(trace: Trace, host: Host, fix: FixId, options: EstimateOptions = {}): { prediction: Prediction } | { unavailable: string } {
  const applied = applyFix(trace, host, fix, options);
  if ('unavailable' in applied) return applied;
  const base = options.unchangedReplay === false ? undefined : baseReplay(trace, host);
  const fixed = replayApplied(trace, host, applied);
  options.replays?.set(fix, fixed);
  return {
    prediction: {
      fix,
      gpuSpanNs: fixed.gpuSpanNs,
      makespanNs: fixed.makespanNs,
      ...(base !== undefined ? { replayedNs: base } : {}),
      notes: [...applied.notes],
    },
  };
}

/** A fix's prediction set against what the recording measured. */
export function estimateOf(recorded: RecordedSpan, p: Prediction): Estimate {
  const measured = recorded.endNs - recorded.startNs;
  const notes = [...p.notes];
  const error = p.replayedNs !== undefined && measured > 0 ? p.replayedNs / measured - 1 : 0;
  if (Math.abs(error) > 0.05)
    notes.push(`the replay of the unchanged recording is ${(error * 100).toFixed(1)}% off its measured GPU span: treat the prediction with that much doubt`);
  return {
    fix: p.fix,
    measuredNs: measured,
    ...(p.replayedNs !== undefined ? { replayedNs: p.replayedNs } : {}),
    predictedNs: p.gpuSpanNs,
    savedNs: Math.max(0, measured - p.gpuSpanNs),
    makespan: { measuredNs: recorded.endNs - Math.min(recorded.firstIssueNs, recorded.startNs), predictedNs: p.makespanNs },
    notes,
  };
}

/** The estimate, or why there is none. */
export function tryEstimate(trace: Trace, host: Host, fix: FixId, options: EstimateOptions = {}): { estimate: Estimate } | { unavailable: string } {
  const p = tryPredict(trace, host, fix, options);
  return 'unavailable' in p ? p : { estimate: estimateOf(recordedSpan(trace, host), p.prediction) };
}

/**
 * Estimated GPU span with one cause removed; null where the fix does not
 * apply or its inputs are unknown (tryEstimate says why). Also callable as
 * estimate(context, fix) with anything holding the trace and host (the
 * diagnosis' Context).
 */
export function estimate(trace: Trace, host: Host, fix: FixId, options?: EstimateOptions): Estimate | null;
export function estimate(ctx: { trace: Trace; host: Host }, fix: FixId, options?: EstimateOptions): Estimate | null;
export function estimate(a: Trace | { trace: Trace; host: Host }, b: Host | FixId, c?: FixId | EstimateOptions, d?: EstimateOptions): Estimate | null {
  const r =
    typeof b === 'string'
      ? tryEstimate((a as { trace: Trace }).trace, (a as { host: Host }).host, b, (c as EstimateOptions | undefined) ?? {})
      : tryEstimate(a as Trace, b, c as FixId, d ?? {});
  return 'estimate' in r ? r.estimate : null;
}
