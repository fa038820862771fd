// The what-if replay's parts, each on its own (replay.test.ts tests the
// whole replay against recordings): the dependency graph
// (profiler/analysis/replay/replay-graph.ts) and the resource model
// (profiler/analysis/replay/replay-resources.ts), on small hand-made traces: one
// device (an H100's limits), one thread, one call per operation.
import { describe, expect, it } from 'vitest';
import type { Host } from '../../profiler/analysis/host.ts';
import { EventHeap, EventRun } from '../../profiler/analysis/replay/replay-events.ts';
import { buildGraph, CompletedPrefix, issueIndex, type DependencyGraph } from '../../profiler/analysis/replay/replay-graph.ts';
import { hostModel } from '../../profiler/analysis/replay/replay-host.ts';
import { Resources } from '../../profiler/analysis/replay/replay-resources.ts';
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

describe('event queues', () => {
  it('a run takes events in (time, code) order and refuses one that would come before its last; full, it slides or grows', () => {
    const run = new EventRun();
    expect(run.append(10, 5)).toBe(true);
    expect(run.append(10, 7)).toBe(true);
    expect(run.append(10, 6)).toBe(false); // same time, smaller code than the last
    expect(run.append(9, 9)).toBe(false);
    run.head += 2; // both taken: empty, it takes anything again
    expect(run.append(1, 1)).toBe(true);
    // Past its room, taking from the front as it goes: the events stay in order.
    const out: number[] = [];
    for (let i = 0; i < 5000; i++) {
      expect(run.append(2 + i, i)).toBe(true);
      if (i % 3 === 0) out.push(run.code[run.head++]!);
    }
    while (run.head < run.tail) out.push(run.code[run.head++]!);
    expect(out).toEqual([1, ...Array.from({ length: 5000 }, (_, i) => i)]);
  });

  it("a heap's top raised in place moves down to where a pop and a push would put it", () => {
    const heap = new EventHeap(4);
    const events: [number, number][] = [
      [5, 1],
      [7, 2],
      [7, 0],
      [9, 3],
      [6, 4],
      [8, 5],
    ];
    for (const [t, c] of events) heap.push(t, c);
    heap.time[0] = 7.5; // (5, 1) becomes (7.5, 1)
    heap.siftTop();
    const out: string[] = [];
    while (heap.size) {
      out.push(`${heap.time[0]}:${heap.code[0]}`);
      heap.pop();
    }
    expect(out).toEqual(['6:4', '7:0', '7:2', '7.5:1', '8:5', '9:3']);
  });

  it('heaps and runs popped by their smallest front give the order of one heap', () => {
    // Pseudo-random (time, code) pairs, ties included, with pops among the pushes.
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const one = new EventHeap();
    const heap = new EventHeap(4);
    const run = new EventRun();
    const a: string[] = [];
    const b: string[] = [];
    const popOne = () => {
      a.push(`${one.time[0]}:${one.code[0]}`);
      one.pop();
    };
    const popSplit = () => {
      const fromRun =
        run.head < run.tail &&
        (!heap.size || run.time[run.head]! < heap.time[0]! || (run.time[run.head] === heap.time[0] && run.code[run.head]! < heap.code[0]!));
      if (fromRun) {
        b.push(`${run.time[run.head]}:${run.code[run.head]}`);
        run.head++;
      } else {
        b.push(`${heap.time[0]}:${heap.code[0]}`);
        heap.pop();
      }
    };
    let now = 0;
    for (let i = 0; i < 20_000; i++) {
      const t = now + Math.floor(rand() * 50);
      const c = Math.floor(rand() * 1000);
      one.push(t, c);
      if (!run.append(t, c)) heap.push(t, c);
      if (rand() < 0.5) {
        popOne();
        popSplit();
        now = Number(a.at(-1)!.split(':')[0]);
      }
    }
    while (one.size) popOne();
    while (heap.size || run.head < run.tail) popSplit();
    expect(b).toEqual(a);
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

  it('an NCCL kernel takes no share of the SMs: it starts beside a kernel that fills the GPU, and frees none when it ends', () => {
    const { trace, host } = build({ 1: NON_BLOCKING, 2: NON_BLOCKING, 3: NON_BLOCKING }, [
      { kind: 'kernel', stream: 1, blocks: 264 },
      { kind: 'kernel', stream: 2, blocks: 264, nccl: true },
      { kind: 'kernel', stream: 3, blocks: 26 },
    ]);
    const r = resourcesOf(trace, host);
    expect(r.acquire(0)).toBe(true);
    expect(r.acquire(1)).toBe(true);
    expect(r.acquire(2)).toBe(false); // the GPU is full of op 0
    r.releaseSms(1, 0);
    expect(r.nextKernel(0)).toBe(-1); // op 1 freed nothing
    r.releaseSms(0, 0);
    expect(r.nextKernel(0)).toBe(2);
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
