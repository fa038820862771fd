// The what-if replay's parts, each on its own (replay.test.ts tests the
// whole replay against recordings): the dependency graph
// (profiler/analysis/replay-graph.ts) and the resource model
// (profiler/analysis/replay-resources.ts), on small hand-made traces: one
// device (an H100's limits), one thread, one call per operation.
import { describe, expect, it } from 'vitest';
import type { Host } from '../../profiler/analysis/host.ts';
import { EventHeap } from '../../profiler/analysis/replay-events.ts';
import { buildGraph, CompletedPrefix, issueIndex, type DependencyGraph } from '../../profiler/analysis/replay-graph.ts';
import { hostModel } from '../../profiler/analysis/replay-host.ts';
import { Resources } from '../../profiler/analysis/replay-resources.ts';
import { allocateOps, OpCategory, OpKind, type Trace } from '../../profiler/analysis/trace.ts';
import { StreamFlags } from '../../profiler/store/enums.ts';
import { H100 } from '../helpers/devices.ts';

interface OpSpec {
  kind: 'kernel' | 'HtoD' | 'DtoH';
  stream: number;
  /** Kernels: blocks of 1024 threads (an H100 holds 2 per SM, 264 in all). */
  blocks?: number;
}

/** Ops issued in this order, 10 µs apart, each by its own call; streams: id → flags, all in one context. */
function build(
  streams: Record<number, number>,
  specs: OpSpec[],
  events: { after: number; eventId: number; stream: number; wait: boolean }[] = [],
): { trace: Trace; host: Host } {
  const n = specs.length;
  const calls = {
    length: n,
    rowId: new Float64Array(n),
    start: new Float64Array(n),
    end: new Float64Array(n),
    pid: new Int32Array(n).fill(1),
    tid: new Int32Array(n).fill(1),
    nameId: new Int32Array(n),
    correlation: new Uint32Array(n),
    domain: new Uint8Array(n).fill(1),
  };
  const ops = allocateOps(n);
  specs.forEach((s, i) => {
    const kernel = s.kind === 'kernel';
    calls.rowId[i] = i + 1;
    calls.start[i] = i * 10_000;
    calls.end[i] = i * 10_000 + 1_000;
    calls.nameId[i] = kernel ? 1 : 2;
    calls.correlation[i] = i + 1;
    ops.kind[i] = kernel ? OpKind.Kernel : OpKind.Memcpy;
    ops.category[i] = kernel ? OpCategory.Compute : s.kind === 'HtoD' ? OpCategory.HtoD : OpCategory.DtoH;
    ops.detail[i] = kernel ? 1 : s.kind === 'HtoD' ? 2 * 16 + 3 : 3 * 16 + 2; // pinned host memory
    ops.start[i] = i * 10_000 + 3_000;
    ops.end[i] = i * 10_000 + 8_000;
    ops.stream[i] = s.stream;
    ops.device[i] = 1;
    ops.pid[i] = 1;
    ops.correlation[i] = i + 1;
    ops.isAsync[i] = 1;
    ops.blocks[i] = kernel ? (s.blocks ?? 10) : 0;
    ops.blockThreads[i] = kernel ? 1024 : 0;
    ops.registers[i] = kernel ? 32 : 0;
  });
  // An event record or wait is made by the call after op `after`'s, before that call issues its op.
  const host: Host = {
    calls,
    opCall: Int32Array.from({ length: n }, (_, i) => i),
    threads: new Map([['1:1', Int32Array.from({ length: n }, (_, i) => i)]]),
    names: new Map([
      [1, 'cudaLaunchKernel'],
      [2, 'cudaMemcpyAsync'],
    ]),
    events: events.filter((e) => !e.wait).map((e) => ({ pid: 1, eventId: e.eventId, stream: e.stream, call: e.after + 1, correlation: e.after + 2 })),
    waits: events
      .filter((e) => e.wait)
      .map((e) => ({ pid: 1, eventId: e.eventId, stream: e.stream, call: e.after + 1, correlation: e.after + 2, start: calls.start[e.after + 1]! })),
    callOf: (_pid, c) => c - 1,
  };
  const trace: Trace = {
    meta: new Map(),
    ops,
    strings: new Map(),
    demangled: new Map(),
    span: { start: 0, end: n * 10_000 },
    devices: [{ ...H100 }],
    streams: Object.entries(streams).map(([id, flags]) => ({
      id: Number(id),
      pid: 1,
      contextId: 1,
      deviceId: 1,
      cuptiStreamId: Number(id),
      flags,
      priority: 0,
    })),
  };
  return { trace, host };
}

function graphOf(trace: Trace, host: Host, stream?: Int32Array, streamFlags?: Map<number, number>): DependencyGraph {
  const model = hostModel(trace, host);
  const n = trace.ops.length;
  const scratch = { opStream: new Int32Array(n), nextInStream: new Int32Array(n).fill(-1), pending: new Int32Array(n) };
  return buildGraph(trace, host, model, issueIndex(host, model), { stream, streamFlags }, scratch);
}

/** The ops that wait for op i besides the next op of its stream. */
const waitersOf = (g: DependencyGraph, i: number) => [...g.edgeTo.subarray(g.edgeStart[i], g.edgeStart[i + 1])];

const LEGACY = StreamFlags.LegacyDefault;
const BLOCKING = 0;
const NON_BLOCKING = StreamFlags.NonBlocking;
const PER_THREAD = StreamFlags.PerThreadDefault;

describe('dependency graph', () => {
  it('the legacy default stream waits for the blocking work issued before it; the next op of each blocking stream waits for it', () => {
    const { trace, host } = build({ 1: LEGACY, 2: BLOCKING, 3: NON_BLOCKING, 4: PER_THREAD }, [
      { kind: 'kernel', stream: 2 }, // 0
      { kind: 'kernel', stream: 3 }, // 1
      { kind: 'kernel', stream: 1 }, // 2: legacy
      { kind: 'kernel', stream: 2 }, // 3
      { kind: 'kernel', stream: 3 }, // 4
      { kind: 'kernel', stream: 4 }, // 5
      { kind: 'kernel', stream: 2 }, // 6
    ]);
    const g = graphOf(trace, host);
    // The legacy op waits for op 0 (blocking stream), not for op 1 (non-blocking).
    expect(g.legacy!.need[2]).toBe(1);
    // After it: the next op of the blocking stream and of the per-thread
    // default stream (which synchronizes with the legacy stream too), once
    // per stream (op 6 waits for it through op 3), not the non-blocking one.
    expect(waitersOf(g, 2)).toEqual([3, 5]);
    expect(g.nextInStream[0]).toBe(3);
    expect(g.nextInStream[3]).toBe(6);
    // Op 3's edges: its stream's previous op, its call, the legacy op.
    expect(g.pending[3]).toBe(3);
    expect(g.pending[4]).toBe(2);
  });

  it("no barrier where a fix moved the legacy stream's work to a non-blocking stream", () => {
    const { trace, host } = build({ 1: LEGACY, 2: BLOCKING }, [
      { kind: 'kernel', stream: 2 },
      { kind: 'kernel', stream: 1 },
      { kind: 'kernel', stream: 2 },
    ]);
    expect(graphOf(trace, host).legacy).not.toBeNull();
    const moved = graphOf(trace, host, Int32Array.from([2, 9, 2]), new Map([[9, NON_BLOCKING]]));
    expect(moved.legacy).toBeNull();
    expect(waitersOf(moved, 1)).toEqual([]);
  });

  it("after cudaStreamWaitEvent, the stream's next op waits for the op the event captured", () => {
    const { trace, host } = build(
      { 1: NON_BLOCKING, 2: NON_BLOCKING },
      [
        { kind: 'HtoD', stream: 1 }, // 0: captured by the record after its call
        { kind: 'kernel', stream: 1 }, // 1
        { kind: 'kernel', stream: 2 }, // 2: issued after the wait
        { kind: 'kernel', stream: 2 }, // 3: waits through op 2
      ],
      [
        { after: 0, eventId: 7, stream: 1, wait: false },
        { after: 1, eventId: 7, stream: 2, wait: true },
      ],
    );
    const g = graphOf(trace, host);
    expect(waitersOf(g, 0)).toEqual([2]);
    expect(waitersOf(g, 1)).toEqual([]);
  });
});

describe('completed prefix', () => {
  it("counts a context's ops complete from its first, up to the first one that is not", () => {
    // Context 0's ops in issue order: 5, 3, 7; context 1's: 2.
    const prefix = new CompletedPrefix(Int32Array.from([5, 3, 7, 2]), Int32Array.from([0, 3]), Int32Array.from([3, 4]));
    const done = new Uint8Array(8);
    done[3] = 1;
    expect(prefix.advance(0, done)).toBe(0); // op 5 still runs
    done[5] = 1;
    expect(prefix.advance(0, done)).toBe(2);
    done[7] = 1;
    expect(prefix.advance(0, done)).toBe(3);
    expect(prefix.count(1)).toBe(0);
  });
});

describe('resources', () => {
  function resourcesOf(trace: Trace, host: Host): Resources {
    const n = trace.ops.length;
    return new Resources(trace, hostModel(trace, host), null, new Int32Array(n).fill(-1), new Float64Array(n), new EventHeap());
  }

  it('kernels share the SMs in arrival order: a small kernel does not overtake a big one queued before it', () => {
    // 264 blocks fill the device: shares 0.6, 0.6, 0.1.
    const { trace, host } = build({ 1: NON_BLOCKING, 2: NON_BLOCKING, 3: NON_BLOCKING }, [
      { kind: 'kernel', stream: 1, blocks: 158 },
      { kind: 'kernel', stream: 2, blocks: 158 },
      { kind: 'kernel', stream: 3, blocks: 26 },
    ]);
    const r = resourcesOf(trace, host);
    expect(r.acquire(0)).toBe(true);
    expect(r.acquire(1)).toBe(false); // does not fit beside op 0
    expect(r.acquire(2)).toBe(false); // would fit, but op 1 is first in line
    r.releaseSms(0, 0);
    expect(r.nextKernel(0)).toBe(1);
    expect(r.nextKernel(0)).toBe(2); // 0.6 + 0.1 fit together
    expect(r.nextKernel(0)).toBe(-1);
  });

  it('copies of one direction take turns on its engine, first come first served; the other direction has an engine of its own', () => {
    const { trace, host } = build({ 1: NON_BLOCKING, 2: NON_BLOCKING, 3: NON_BLOCKING }, [
      { kind: 'HtoD', stream: 1 },
      { kind: 'HtoD', stream: 2 },
      { kind: 'DtoH', stream: 3 },
      { kind: 'HtoD', stream: 3 },
    ]);
    const r = resourcesOf(trace, host);
    expect(r.acquire(0)).toBe(true);
    expect(r.acquire(1)).toBe(false);
    expect(r.acquire(2)).toBe(true);
    expect(r.acquire(3)).toBe(false);
    const htod = r.engineOf(0);
    expect(r.nextCopy(htod)).toBe(1);
    expect(r.nextCopy(htod)).toBe(3);
    expect(r.nextCopy(htod)).toBe(-1); // idle: the next copy takes it at once
    expect(r.acquire(0)).toBe(true);

    // A device with one copy engine: both directions queue for it.
    const shared = build({ 1: NON_BLOCKING, 2: NON_BLOCKING }, [
      { kind: 'HtoD', stream: 1 },
      { kind: 'DtoH', stream: 2 },
    ]);
    shared.trace.devices[0]!.asyncEngineCount = 1;
    const s = resourcesOf(shared.trace, shared.host);
    expect(s.acquire(0)).toBe(true);
    expect(s.acquire(1)).toBe(false);
  });
});
