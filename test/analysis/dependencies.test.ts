// The dependency view's data (profiler/analysis/replay/dependencies.ts) on real
// recordings: which operation each cudaStreamWaitEvent made wait for which,
// checked against SQL on the file; the wait time and held span by their
// definition, recomputed in SQL; the critical chain; and the waits that
// PyTorch (wait_stream, NCCL's streams) and CuPy create through the same
// calls.
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { criticalChain, dependenciesOf, dependenciesOfOp, holdOf, waitTime, type Dependencies } from '../../profiler/analysis/replay/dependencies.ts';
import { callName, loadHost } from '../../profiler/analysis/host.ts';
import { loadTrace, OpKind } from '../../profiler/analysis/trace.ts';
import { loadTimelineColumns } from '../../profiler/native/addon.ts';
import { openRecording, type Db } from '../../profiler/store/database.ts';
import { StreamFlags } from '../../profiler/store/enums.ts';
import { heldBy, sqlEventWaits as sqlPairs, sqlOps } from '../helpers/event-waits.ts';
import { build } from '../helpers/replay-traces.ts';

const dir = path.join(import.meta.dirname, '../fixtures/recordings');
const open: Db[] = [];
afterAll(() => open.forEach((db) => db.close()));

function load(name: string): { db: Db; d: Dependencies } {
  const file = path.join(dir, name);
  const db = openRecording(file, { readonly: true });
  open.push(db);
  const columns = loadTimelineColumns(file);
  const trace = loadTrace(db, columns.ops, columns.calls);
  return { db, d: dependenciesOf(trace, loadHost(db, trace.ops, columns.calls)) };
}

const TABLES = { [OpKind.Kernel]: 'kernels', [OpKind.Memcpy]: 'memcpys', [OpKind.Memset]: 'memsets' } as Record<number, string>;
const key = (d: Dependencies, i: number) => `${TABLES[d.trace.ops.kind[i]!]}:${d.trace.ops.rowId[i]}`;

const edges = (d: Dependencies) => [...d.waitFrom.keys()].map((j) => `${key(d, d.waitFrom[j]!)} -> ${key(d, d.waitTo[j]!)}`);

describe("the runner's events scenario: cudaEventRecord → cudaStreamWaitEvent between streams", () => {
  for (const name of ['matmul-events.sqlite', 'normalise-events.sqlite', 'transpose-events.sqlite']) {
    it(`${name}: the record's operation → the waiting operation, as SQL finds them, each with its two calls`, () => {
      const { db, d } = load(name);
      const expected = sqlPairs(db).map((p) => `${p.awaited} -> ${p.waiting}`);
      // 8 chunks: HtoD → kernel, kernel → DtoH.
      expect(expected).toHaveLength(16);
      expect(edges(d).sort()).toEqual([...new Set(expected)].sort());
      for (let j = 0; j < d.waitFrom.length; j++) {
        expect(callName(d.host, d.waitRecord[j]!)).toBe('cudaEventRecord');
        expect(callName(d.host, d.waitCall[j]!)).toBe('cudaStreamWaitEvent');
        // The record came after the awaited op's launch, the wait before the waiting op's.
        const { calls, opCall } = d.host;
        expect(calls.start[d.waitRecord[j]!]).toBeGreaterThan(calls.start[opCall[d.waitFrom[j]!]!]!);
        expect(calls.start[d.waitCall[j]!]).toBeLessThan(calls.start[opCall[d.waitTo[j]!]!]!);
      }
    });

    it(`${name}: wait times and held spans by their definition, recomputed in SQL`, () => {
      const { db, d } = load(name);
      const ops = sqlOps(db);
      let held = 0;
      for (let j = 0; j < d.waitFrom.length; j++) {
        const from = ops.get(key(d, d.waitFrom[j]!))!;
        const to = ops.get(key(d, d.waitTo[j]!))!;
        const { ready, waitNs: wait } = heldBy(ops, from, to);
        expect(waitTime(d, j)).toBe(wait);
        const hold = holdOf(d, d.waitTo[j]!);
        if (wait > 0) {
          held++;
          expect(hold).toEqual({ startNs: ready, endNs: Math.min(from.end_ns, to.start_ns), awaited: d.waitFrom[j] });
        } else expect(hold).toBeNull();
      }
      // Some waits did hold their operation, and the hatched spans are those.
      expect(held).toBeGreaterThan(4);
      expect(d.holdOp.length).toBe(held);
    });
  }

  it('the critical chain of a kernel held by its wait: the awaited copy, back through the copy engine, to the host call', () => {
    const { d } = load('matmul-events.sqlite');
    const { ops } = d.trace;
    // The kernels an event wait held, longest hold first.
    const held = [...d.holdOp]
      .filter((i) => ops.kind[i] === OpKind.Kernel)
      .sort((a, b) => holdOf(d, b)!.endNs - holdOf(d, b)!.startNs - (holdOf(d, a)!.endNs - holdOf(d, a)!.startNs));
    expect(held.length).toBeGreaterThan(0);
    const k = held[0]!;
    const { steps, complete } = criticalChain(d, k, 256);
    expect(complete).toBe(true);
    expect(steps[0]).toMatchObject({ kind: 'event', to: k, from: holdOf(d, k)!.awaited });
    expect(steps.at(-1)!.kind).toBe('launch');
    expect(callName(d.host, steps.at(-1)!.from)).toMatch(/^cuda(Memcpy|LaunchKernel)/);
    for (let s = 1; s < steps.length; s++) expect(steps[s]!.to).toBe(steps[s - 1]!.from);
    // Each step is the dependency that ended last.
    for (const s of steps) {
      const all = dependenciesOfOp(d, s.to);
      expect(s.atNs).toBe(Math.max(...all.map((x) => x.atNs)));
    }
  });
});

describe('the legacy default stream: the barrier as a dependency', () => {
  it("a default-stream kernel's chain runs back through the staircase's barrier", () => {
    const { d } = load('normalise-default-stream.sqlite');
    const { ops } = d.trace;
    const last = [...Array(ops.length).keys()].filter((i) => ops.kind[i] === OpKind.Kernel).at(-1)!;
    const { steps, complete } = criticalChain(d, last, 256);
    expect(complete).toBe(true);
    expect(steps.filter((s) => s.kind === 'barrier').length).toBeGreaterThan(4);
    // A barrier step crosses streams: from a copy stream to the legacy stream and back.
    for (const s of steps.filter((x) => x.kind === 'barrier')) expect(ops.stream[s.from]).not.toBe(ops.stream[s.to]);
  });
});

describe("frameworks' cross-stream waits: the same calls underneath", () => {
  // PyTorch's wait_stream (torch_streams, torch_prefetch), CuPy's events,
  // NCCL's streams under torch.distributed (a record on a stream that only
  // waited is passed on: the graph follows it where the SQL above cannot).
  for (const [name, minEdges] of [
    ['torch_streams.sqlite', 4],
    ['torch_prefetch.sqlite', 10],
    ['cupy_streams_events.sqlite', 60],
    ['nccl-serial-h200x2.sqlite', 400],
    ['nccl-overlap-h200x2.sqlite', 600],
  ] as const) {
    it(`${name}: each wait SQL finds has an edge from the awaited operation (or a later one of its stream)`, () => {
      const { db, d } = load(name);
      expect(d.waitFrom.length).toBeGreaterThanOrEqual(minEdges);
      const { ops } = d.trace;
      const index = new Map([...Array(ops.length).keys()].map((i) => [key(d, i), i]));
      const issue = (i: number) => d.host.calls.start[d.host.opCall[i]!]!;
      let checked = 0;
      for (const p of sqlPairs(db)) {
        if (p.awaited === null || p.waiting === null) continue;
        const w = index.get(p.waiting)!;
        // A wait for an op implies those before it on its stream: the graph keeps the latest.
        const ok = [...d.waitsInto.of(w)].some((j) => ops.stream[d.waitFrom[j]!] === p.awaitedStream && issue(d.waitFrom[j]!) >= p.awaitedIssued!);
        expect(ok, `${p.awaited} -> ${p.waiting}`).toBe(true);
        checked++;
      }
      expect(checked).toBeGreaterThan(0);
      for (let j = 0; j < d.waitFrom.length; j++) {
        expect(callName(d.host, d.waitRecord[j]!)).toMatch(/^cu(da)?EventRecord/);
        expect(callName(d.host, d.waitCall[j]!)).toMatch(/^cu(da)?StreamWaitEvent/);
        // The awaited operation ended before the waiting one started (the clocks are one GPU's, or merged to a few µs).
        expect(ops.end[d.waitFrom[j]!]!).toBeLessThanOrEqual(ops.start[d.waitTo[j]!]! + 5_000);
      }
    });
  }

  it('a wait passed on through a stream without operations names the first record and the last wait', () => {
    // PyTorch's chain for an asynchronous collective (hand-built: no fixture
    // has one): the compute stream (1) records, a side stream without ops
    // (2) waits and records, NCCL's stream (3) waits and runs the kernel.
    const { trace, host } = build(
      { 1: StreamFlags.NonBlocking, 2: StreamFlags.NonBlocking, 3: StreamFlags.NonBlocking },
      [
        { kind: 'kernel', stream: 1 }, // 0
        { kind: 'kernel', stream: 1 }, // 1: the record after it captures it
        { kind: 'kernel', stream: 1 }, // 2
        { kind: 'kernel', stream: 3, nccl: true }, // 3
      ],
      [
        { after: 1, eventId: 1, stream: 1, wait: false }, // by call 2
        { after: 1, eventId: 1, stream: 2, wait: true },
        { after: 2, eventId: 2, stream: 2, wait: false }, // by call 3
        { after: 2, eventId: 2, stream: 3, wait: true },
      ],
    );
    const d = dependenciesOf(trace, host);
    expect([...d.waitFrom]).toEqual([1]);
    expect([...d.waitTo]).toEqual([3]);
    expect([...d.waitRecord]).toEqual([2]);
    expect([...d.waitCall]).toEqual([3]);
    // Ops are built 10 µs apart and 5 µs long: the kernel was launched after the compute op ended, so its chain is its launch.
    expect(criticalChain(d, 3, 10).steps.map((s) => s.kind)).toEqual(['launch']);
  });

  it('a synchronize call depends on the operation it waited for', () => {
    const { d } = load('torch_streams.sqlite');
    expect(d.syncCall.length).toBeGreaterThan(0);
    for (let j = 0; j < d.syncCall.length; j++) {
      const k = d.syncCall[j]!;
      expect(callName(d.host, k)).toMatch(/Synchronize/);
      // The op had ended when the call returned (it may have before the call began: then it did not wait).
      expect(d.trace.ops.end[d.syncOp[j]!]).toBeLessThanOrEqual(d.host.calls.end[k]! + 5_000);
    }
  });
});
