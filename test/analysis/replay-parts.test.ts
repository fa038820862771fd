// The what-if replay's parts, each on its own (replay.test.ts tests the
// whole replay against recordings): the dependency graph
// (profiler/analysis/replay/replay-graph.ts) and the resource model
// (profiler/analysis/replay/replay-resources.ts and the native scheduler
// that grants them), on small hand-made traces: one
// device (an H100's limits), one thread, one call per operation.
import { describe, expect, it } from 'vitest';
import type { Host } from '../../profiler/analysis/host.ts';
import { buildGraph, issueIndex, type DependencyGraph } from '../../profiler/analysis/replay/replay-graph.ts';
import { hostModel } from '../../profiler/analysis/replay/replay-host.ts';
import { replay } from '../../profiler/analysis/replay/replay.ts';
import type { Trace } from '../../profiler/analysis/trace.ts';
import { StreamFlags } from '../../profiler/store/enums.ts';
import { build } from '../helpers/replay-traces.ts';

function graphOf(trace: Trace, host: Host, stream?: Int32Array, streamFlags?: Map<number, number>, waitFor?: Map<number, number[]>): DependencyGraph {
  const model = hostModel(trace, host);
  const n = trace.ops.length;
  const scratch = { opStream: new Int32Array(n), nextInStream: new Int32Array(n).fill(-1), pending: new Int32Array(n) };
  return buildGraph(trace, host, model, issueIndex(host, model), { stream, streamFlags, waitFor }, scratch);
}

/** The ops that wait for op i besides the next op of its stream. */
const waitersOf = (g: DependencyGraph, i: number) => (g.edgeTo.length ? [...g.edgeTo.subarray(g.edgeStart[i], g.edgeStart[i + 1])] : []);

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

  it('no event and no legacy stream: no edges but stream order and calls, and no per-op index of them', () => {
    const { trace, host } = build({ 1: NON_BLOCKING, 2: NON_BLOCKING }, [
      { kind: 'kernel', stream: 1 },
      { kind: 'kernel', stream: 2 },
      { kind: 'kernel', stream: 1 },
    ]);
    const g = graphOf(trace, host);
    expect(g.edgeTo).toHaveLength(0);
    expect(g.edgeStart).toHaveLength(0);
    expect([...g.pending]).toEqual([1, 1, 2]);
    const r = replay(trace, host);
    expect(r.start[2]).toBeGreaterThanOrEqual(r.end[0]!);
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

describe('dependency graph: waits passed on', () => {
  // PyTorch's chain for an asynchronous all-reduce: the compute stream (1)
  // records, a side stream without ops of its own (2) waits and records,
  // NCCL's stream (3) waits and runs the kernel.
  const chain = () =>
    build(
      { 1: NON_BLOCKING, 2: NON_BLOCKING, 3: NON_BLOCKING },
      [
        { kind: 'kernel', stream: 1 }, // 0
        { kind: 'kernel', stream: 1 }, // 1: the record after it captures it
        { kind: 'kernel', stream: 1 }, // 2: issued later, waited for by nobody
        { kind: 'kernel', stream: 3, nccl: true }, // 3
      ],
      [
        { after: 1, eventId: 1, stream: 1, wait: false },
        { after: 1, eventId: 1, stream: 2, wait: true },
        { after: 2, eventId: 2, stream: 2, wait: false },
        { after: 2, eventId: 2, stream: 3, wait: true },
      ],
    );

  it('a record on a stream that only waited captures the wait: the NCCL kernel waits for the compute op', () => {
    const { trace, host } = chain();
    const g = graphOf(trace, host);
    expect(waitersOf(g, 1)).toEqual([3]);
    expect(waitersOf(g, 2)).toEqual([]);
    expect([...g.waitFrom]).toEqual([1]);
    expect([...g.waitTo]).toEqual([3]);
  });

  it("a fix's waitFor replaces an op's recorded event waits", () => {
    const { trace, host } = chain();
    const g = graphOf(trace, host, undefined, undefined, new Map([[3, [0]]]));
    expect(waitersOf(g, 0)).toEqual([3]);
    expect(waitersOf(g, 1)).toEqual([]);
  });

  it('a stream without ops keeps one wait per stream waited for, the latest', () => {
    // Stream 2 waits for op 0, then for op 1 (same stream): a record on it captures op 1 only.
    const { trace, host } = build(
      { 1: NON_BLOCKING, 2: NON_BLOCKING, 3: NON_BLOCKING },
      [
        { kind: 'kernel', stream: 1 }, // 0
        { kind: 'kernel', stream: 1 }, // 1
        { kind: 'kernel', stream: 1 }, // 2
        { kind: 'kernel', stream: 3 }, // 3
      ],
      [
        { after: 0, eventId: 1, stream: 1, wait: false },
        { after: 0, eventId: 1, stream: 2, wait: true },
        { after: 1, eventId: 2, stream: 1, wait: false },
        { after: 1, eventId: 2, stream: 2, wait: true },
        { after: 2, eventId: 3, stream: 2, wait: false },
        { after: 2, eventId: 3, stream: 3, wait: true },
      ],
    );
    const g = graphOf(trace, host);
    expect([...g.waitFrom]).toEqual([1]);
    expect([...g.waitTo]).toEqual([3]);
  });
});

describe('resources', () => {
  // The scheduler (native/addon/src/replay_scheduler.cc) grants them: seen in
  // the replay's starts and ends. Each op here runs 50 µs from 3 µs after its
  // call, the calls 10 µs apart: every op is issued while the ones before it
  // still run.
  const LONG = 50_000;
  const replayed = (t: { trace: Trace; host: Host }) => replay(t.trace, t.host);

  it('kernels share the SMs in arrival order: a small kernel does not overtake a big one queued before it', () => {
    // 264 blocks fill the device: shares 0.6, 0.6, 0.1.
    const r = replayed(
      build({ 1: NON_BLOCKING, 2: NON_BLOCKING, 3: NON_BLOCKING }, [
        { kind: 'kernel', stream: 1, blocks: 158, ns: LONG },
        { kind: 'kernel', stream: 2, blocks: 158, ns: LONG },
        { kind: 'kernel', stream: 3, blocks: 26, ns: LONG },
      ]),
    );
    expect(r.start[1]).toBe(r.end[0]); // does not fit beside op 0
    expect(r.start[2]).toBe(r.end[0]); // would fit, but op 1 is first in line; then 0.6 + 0.1 fit together
  });

  it('an NCCL kernel takes no share of the SMs: it starts beside a kernel that fills the GPU, and frees none when it ends', () => {
    const r = replayed(
      build({ 1: NON_BLOCKING, 2: NON_BLOCKING, 3: NON_BLOCKING }, [
        { kind: 'kernel', stream: 1, blocks: 264, ns: LONG },
        { kind: 'kernel', stream: 2, blocks: 264, nccl: true, ns: 10_000 },
        { kind: 'kernel', stream: 3, blocks: 26, ns: LONG },
      ]),
    );
    expect(r.start[1]).toBeLessThan(r.end[0]!);
    expect(r.end[1]).toBeLessThan(r.end[0]!);
    expect(r.start[2]).toBe(r.end[0]); // the GPU is full of op 0 until it ends: op 1 freed nothing
  });

  it('copies of one direction take turns on its engine, first come first served; the other direction has an engine of its own', () => {
    const r = replayed(
      build({ 1: NON_BLOCKING, 2: NON_BLOCKING, 3: NON_BLOCKING, 4: NON_BLOCKING }, [
        { kind: 'HtoD', stream: 1, ns: LONG },
        { kind: 'HtoD', stream: 2, ns: LONG },
        { kind: 'DtoH', stream: 3, ns: LONG },
        { kind: 'HtoD', stream: 4, ns: LONG },
      ]),
    );
    expect(r.start[1]).toBeGreaterThanOrEqual(r.end[0]!);
    expect(r.start[3]).toBeGreaterThanOrEqual(r.end[1]!);
    expect(r.start[2]).toBeLessThan(r.end[0]!); // DtoH beside the first HtoD

    // A device with one copy engine: both directions queue for it.
    const shared = build({ 1: NON_BLOCKING, 2: NON_BLOCKING }, [
      { kind: 'HtoD', stream: 1, ns: LONG },
      { kind: 'DtoH', stream: 2, ns: LONG },
    ]);
    shared.trace.devices[0]!.asyncEngineCount = 1;
    const s = replayed(shared);
    expect(s.start[1]).toBeGreaterThanOrEqual(s.end[0]!);
  });
});

describe('a replay whose ops wait for each other', () => {
  it('an op that never began starts at 0, and the GPU span counts it so; the rest replay', () => {
    const t = build({ 1: NON_BLOCKING, 2: NON_BLOCKING, 3: NON_BLOCKING }, [
      { kind: 'kernel', stream: 1 }, // 0
      { kind: 'kernel', stream: 2 }, // 1
      { kind: 'kernel', stream: 3 }, // 2
    ]);
    // A fix's waits that make stream 1's op and stream 2's wait for each other: one of them never begins.
    const r = replay(t.trace, t.host, {
      waitFor: new Map([
        [1, [1]],
        [2, [0]],
      ]),
    });
    const never = [0, 1, 2].filter((i) => r.end[i] === 0);
    expect(never).toHaveLength(1);
    expect(r.start[never[0]!]).toBe(0);
    expect(r.start[2]).toBeGreaterThan(0);
    expect(r.gpuStart).toBe(0);
    expect(r.gpuEnd).toBe(Math.max(...r.end));
    // Without the waits every op replays, and the span is theirs.
    const all = replay(t.trace, t.host);
    expect(all.gpuStart).toBe(Math.min(...all.start));
    expect(all.gpuEnd).toBe(Math.max(...all.end));
    expect(all.gpuStart).toBeGreaterThan(0);
  });
});

describe('the native simulation refuses what it cannot follow', () => {
  it('an index out of range is refused by name, before anything is read past its end', () => {
    const t = build({ 1: NON_BLOCKING }, [
      { kind: 'kernel', stream: 1 },
      { kind: 'kernel', stream: 1 },
    ]);
    const model = hostModel(t.trace, t.host);
    const kept = model.order[1]!;
    model.order[1] = 7; // no op 7
    expect(() => replay(t.trace, t.host)).toThrow(/replaySchedule: order\[1\] = 7 is outside 0\.\.1/);
    model.order[1] = kept;
    expect(replay(t.trace, t.host).end[1]).toBeGreaterThan(0);
  });
});
