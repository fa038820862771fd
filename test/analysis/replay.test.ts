// The what-if replay (profiler/analysis/replay/replay.ts, whatif.ts, bandwidth.ts):
//  1. its rules on small hand-made traces (one rule each);
//  2. replaying each real H100 runner recording unchanged reproduces its
//     measured GPU span;
//  3. the product's acceptance: with the cause removed, the predicted GPU
//     span of the default-stream, pageable and sync-each runs is within 15%
//     of the measured concurrent run of the same workload and size, and
//     that of a Numba program pinning its buffers inside its loop within
//     15% of the same program pinning them once (steady state, both);
//  4. 10 million operations replay in seconds.
//
// Which span: the GPU span, first op start → last op end, on both sides.
// It is what the fixes change (overlap on the device), it is defined for
// every recording (not only the bundled runner's NVTX phases), and it is
// what `report`/`diff` call the run time. The runner's "issue chunk 0" →
// "synchronize" NVTX interval adds host time the replay takes as recorded
// (the first call's ~40 µs warm-up before the first copy, the last sync's
// return); it is printed beside the prediction's makespan (first issue →
// last op end) for comparison, not asserted.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { pinnedBandwidth, referenceFrom, PCIE_EFFICIENCY } from '../../profiler/analysis/bandwidth.ts';
import type { Host } from '../../profiler/analysis/host.ts';
import { diagnose } from '../../profiler/analysis/diagnosis/diagnose.ts';
import { analyze } from '../../profiler/analysis/diagnosis/analyze.ts';
import { replay } from '../../profiler/analysis/replay/replay.ts';
import { hostModel, WaitKind } from '../../profiler/analysis/replay/replay-host.ts';
import { H100 } from '../helpers/devices.ts';
import { syntheticReplay } from '../helpers/synthetic-replay.ts';
import { allocateOps, OpCategory, OpKind, type Trace } from '../../profiler/analysis/trace.ts';
import { estimate, tryEstimate } from '../../profiler/analysis/replay/whatif.ts';
import type { FixId } from '../../profiler/contract/findings.ts';
import { openRecording } from '../../profiler/store/database.ts';

const dir = path.resolve(import.meta.dirname, '../fixtures/recordings');
const WORKLOADS = ['normalise', 'matmul', 'transpose'];
const SCENARIOS = ['serial', 'default-stream', 'pageable', 'concurrent', 'events', 'priority', 'sync-each'];

interface Loaded {
  trace: Trace;
  host: Host;
  analysis: ReturnType<typeof analyze>;
  /** The runner's "issue chunk 0" start → "synchronize" end (ns). */
  nvtxWall: number | null;
}
const cache = new Map<string, Loaded>();
function load(name: string): Loaded {
  let l = cache.get(name);
  if (!l) {
    const db = openRecording(path.join(dir, `${name}.sqlite`), { readonly: true });
    try {
      const analysis = analyze(db);
      const r = db
        .prepare(
          `SELECT (SELECT min(n.start_ns) FROM nvtx_ranges n JOIN strings s ON s.id = n.name_id WHERE s.value = 'issue chunk 0') AS a,
          (SELECT max(n.end_ns) FROM nvtx_ranges n JOIN strings s ON s.id = n.name_id WHERE s.value = 'synchronize') AS b`,
        )
        .get() as { a: number | null; b: number | null };
      l = { trace: analysis.trace, host: analysis.host, analysis, nvtxWall: r.a !== null && r.b !== null ? r.b - r.a : null };
    } finally {
      db.close();
    }
    cache.set(name, l);
  }
  return l;
}
function gpuSpan(trace: Trace): number {
  let s = Infinity;
  let e = -Infinity;
  for (let i = 0; i < trace.ops.length; i++) {
    s = Math.min(s, trace.ops.start[i]!);
    e = Math.max(e, trace.ops.end[i]!);
  }
  return e - s;
}
const us = (ns: number) => `${(ns / 1000).toFixed(1)} µs`;
const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}%`;

// ---------------------------------------------------------------------------
// Hand-made traces: one device, calls on one thread unless said.

interface OpSpec {
  kind: 'kernel' | 'HtoD' | 'DtoH';
  stream: number;
  start: number;
  end: number;
  /** Host memory kind of a copy: 2 pinned (default), 1 pageable. */
  host?: number;
  bytes?: number;
  blocks?: number;
  isAsync?: boolean;
}
interface CallSpec {
  name: string;
  start: number;
  end: number;
  tid?: number;
  ops?: OpSpec[];
}
interface Spec {
  calls: CallSpec[];
  /** stream id → flags (streams.flags); every stream in context 1. */
  streams: Record<number, number>;
  events?: { call: number; eventId: number; stream: number }[];
  waits?: { call: number; eventId: number; stream: number }[];
}

function build(spec: Spec): { trace: Trace; host: Host } {
  const names = [...new Set(spec.calls.map((c) => c.name))];
  const m = spec.calls.length;
  const calls = {
    length: m,
    rowId: new Float64Array(m),
    start: new Float64Array(m),
    end: new Float64Array(m),
    pid: new Int32Array(m).fill(1),
    tid: new Int32Array(m),
    nameId: new Int32Array(m),
    correlation: new Uint32Array(m),
    domain: new Uint8Array(m).fill(1),
  };
  const flat: { op: OpSpec; call: number }[] = [];
  spec.calls.forEach((c, k) => {
    calls.rowId[k] = k + 1;
    calls.start[k] = c.start;
    calls.end[k] = c.end;
    calls.tid[k] = c.tid ?? 1;
    calls.nameId[k] = names.indexOf(c.name) + 1;
    calls.correlation[k] = k + 1;
    for (const op of c.ops ?? []) flat.push({ op, call: k });
  });
  flat.sort((a, b) => a.op.start - b.op.start);
  const ops = allocateOps(flat.length);
  const opCall = new Int32Array(flat.length);
  flat.forEach(({ op, call }, i) => {
    const kernel = op.kind === 'kernel';
    ops.kind[i] = kernel ? OpKind.Kernel : OpKind.Memcpy;
    ops.category[i] = kernel ? OpCategory.Compute : op.kind === 'HtoD' ? OpCategory.HtoD : OpCategory.DtoH;
    const hostKind = op.host ?? 2;
    ops.detail[i] = kernel ? 1 : op.kind === 'HtoD' ? hostKind * 16 + 3 : 3 * 16 + hostKind;
    ops.start[i] = op.start;
    ops.end[i] = op.end;
    ops.stream[i] = op.stream;
    ops.device[i] = 1;
    ops.pid[i] = 1;
    ops.correlation[i] = call + 1;
    ops.isAsync[i] = op.isAsync === false ? 0 : 1;
    ops.bytes[i] = op.bytes ?? 0;
    ops.blocks[i] = kernel ? (op.blocks ?? 132) : 0;
    ops.blockThreads[i] = kernel ? 1024 : 0;
    ops.registers[i] = kernel ? 32 : 0;
    opCall[i] = call;
  });
  const streams = Object.entries(spec.streams).map(([id, flags]) => ({
    id: Number(id),
    pid: 1,
    contextId: 1,
    deviceId: 1,
    cuptiStreamId: Number(id),
    flags,
    priority: 0,
  }));
  const threads = new Map<string, Int32Array>();
  for (const tid of new Set(spec.calls.map((c) => c.tid ?? 1))) {
    threads.set(`1:${tid}`, Int32Array.from(spec.calls.map((c, k) => ((c.tid ?? 1) === tid ? k : -1)).filter((k) => k >= 0)));
  }
  const host: Host = {
    calls,
    opCall,
    threads,
    names: new Map(names.map((n, j) => [j + 1, n])),
    events: (spec.events ?? []).map((e) => ({ pid: 1, eventId: e.eventId, stream: e.stream, call: e.call, correlation: e.call + 1 })),
    waits: (spec.waits ?? []).map((w) => ({
      pid: 1,
      eventId: w.eventId,
      stream: w.stream,
      call: w.call,
      correlation: w.call + 1,
      start: calls.start[w.call]!,
    })),
    callOf: (_pid, c) => c - 1,
  };
  const trace: Trace = { meta: new Map(), devices: [{ ...H100 }], streams, ops, strings: new Map(), demangled: new Map(), span: { start: 0, end: 0 } };
  return { trace, host };
}

/** Op index by recorded start (ops are sorted by start). */
const at = (trace: Trace, start: number) => trace.ops.start.indexOf(start);

describe('replay rules on hand-made traces', () => {
  // Launches ~1 µs apart; ops that start 2 µs after their call returns
  // teach the model a 2 µs launch latency.
  it('same-direction copies share one engine; HtoD and DtoH overlap', () => {
    const { trace, host } = build({
      streams: { 1: 0, 2: 0, 3: 0 },
      calls: [
        { name: 'cudaMemcpyAsync', start: 0, end: 1_000, ops: [{ kind: 'HtoD', stream: 1, start: 3_000, end: 103_000 }] },
        { name: 'cudaMemcpyAsync', start: 1_000, end: 2_000, ops: [{ kind: 'HtoD', stream: 2, start: 103_000, end: 203_000 }] },
        { name: 'cudaMemcpyAsync', start: 2_000, end: 3_000, ops: [{ kind: 'DtoH', stream: 3, start: 5_000, end: 105_000 }] },
      ],
    });
    const r = replay(trace, host);
    expect(r.start[at(trace, 103_000)]).toBeGreaterThanOrEqual(r.end[at(trace, 3_000)]!); // queued behind the first
    expect(r.start[at(trace, 5_000)]).toBeLessThan(r.end[at(trace, 3_000)]!); // other direction: concurrent
    expect(r.gpuSpanNs / gpuSpan(trace) - 1).toBeCloseTo(0, 1);
  });

  it('the legacy default stream waits for earlier blocking work and holds back later blocking work, not non-blocking work', () => {
    const { trace, host } = build({
      streams: { 1: 1, 2: 0, 3: 2 },
      calls: [
        { name: 'cudaMemcpyAsync', start: 0, end: 1_000, ops: [{ kind: 'HtoD', stream: 2, start: 3_000, end: 103_000 }] },
        { name: 'cudaLaunchKernel', start: 1_000, end: 2_000, ops: [{ kind: 'kernel', stream: 1, start: 103_000, end: 153_000, blocks: 10 }] },
        { name: 'cudaLaunchKernel', start: 2_000, end: 3_000, ops: [{ kind: 'kernel', stream: 2, start: 153_000, end: 163_000, blocks: 10 }] },
        { name: 'cudaLaunchKernel', start: 3_000, end: 4_000, ops: [{ kind: 'kernel', stream: 3, start: 6_000, end: 16_000, blocks: 10 }] },
      ],
    });
    const r = replay(trace, host);
    const copy = at(trace, 3_000);
    const legacy = at(trace, 103_000);
    expect(r.start[legacy]).toBeGreaterThanOrEqual(r.end[copy]!);
    expect(r.start[at(trace, 153_000)]).toBeGreaterThanOrEqual(r.end[legacy]!);
    expect(r.start[at(trace, 6_000)]).toBeLessThan(r.end[copy]!); // non-blocking: no barrier

    // Moved off the legacy stream (to stream 2, where its thread issued before), it no longer waits for anything but its stream.
    const e = tryEstimate(trace, host, 'move-default-stream');
    expect('estimate' in e).toBe(true);
  });

  it('cudaStreamWaitEvent orders the waiting stream after the recorded work', () => {
    const { trace, host } = build({
      streams: { 1: 2, 2: 2 },
      calls: [
        { name: 'cudaMemcpyAsync', start: 0, end: 1_000, ops: [{ kind: 'HtoD', stream: 1, start: 3_000, end: 103_000 }] },
        { name: 'cudaEventRecord', start: 1_000, end: 2_000 },
        { name: 'cudaStreamWaitEvent', start: 2_000, end: 3_000 },
        { name: 'cudaLaunchKernel', start: 3_000, end: 4_000, ops: [{ kind: 'kernel', stream: 2, start: 103_000, end: 113_000, blocks: 10 }] },
      ],
      events: [{ call: 1, eventId: 7, stream: 1 }],
      waits: [{ call: 2, eventId: 7, stream: 2 }],
    });
    const r = replay(trace, host);
    expect(r.start[at(trace, 103_000)]).toBeGreaterThanOrEqual(r.end[at(trace, 3_000)]!);
  });

  it('kernels run side by side only while their blocks fit on the SMs', () => {
    // 1024 threads per block: 2 resident blocks per SM, 264 on 132 SMs.
    const spec = (blocks: number): Spec => ({
      streams: { 1: 2, 2: 2 },
      calls: [
        { name: 'cudaLaunchKernel', start: 0, end: 1_000, ops: [{ kind: 'kernel', stream: 1, start: 3_000, end: 103_000, blocks }] },
        { name: 'cudaLaunchKernel', start: 1_000, end: 2_000, ops: [{ kind: 'kernel', stream: 2, start: 4_000, end: 104_000, blocks }] },
      ],
    });
    const small = build(spec(100));
    expect(replay(small.trace, small.host).gpuSpanNs).toBeLessThan(110_000);
    const full = build(spec(264));
    expect(replay(full.trace, full.host).gpuSpanNs).toBeGreaterThanOrEqual(200_000);
  });

  it('a host-blocking sync delays the next launch until the GPU is done; removed, it does not', () => {
    const { trace, host } = build({
      streams: { 1: 2, 2: 2 },
      calls: [
        { name: 'cudaLaunchKernel', start: 0, end: 1_000, ops: [{ kind: 'kernel', stream: 1, start: 3_000, end: 103_000, blocks: 10 }] },
        { name: 'cudaDeviceSynchronize', start: 1_500, end: 105_000 },
        { name: 'cudaLaunchKernel', start: 106_000, end: 107_000, ops: [{ kind: 'kernel', stream: 2, start: 109_000, end: 209_000, blocks: 10 }] },
        { name: 'cudaDeviceSynchronize', start: 107_500, end: 211_000 },
      ],
    });
    // The sync is seen as a wait for the device's work, with 2 µs of its own time after it.
    const model = hostModel(trace, host);
    expect(model.waitKind[1]).toBe(WaitKind.Prefix);
    expect(model.cost[1]).toBe(2_000);
    expect(Math.abs(replay(trace, host).gpuSpanNs - gpuSpan(trace))).toBeLessThan(1_000);
    const e = estimate(trace, host, 'remove-host-blocking')!;
    // Without the wait the second kernel is issued ~5 µs after the first and runs beside it.
    expect(e.predictedNs).toBeLessThan(110_000);
    expect(e.notes.join()).toMatch(/1 synchronize calls/);
  });

  it('a host registration between launches waits for the device; pinned once before the loop, it and its wait are gone', () => {
    const { trace, host } = build({
      streams: { 1: 2, 2: 2 },
      calls: [
        { name: 'cudaLaunchKernel', start: 0, end: 1_000, ops: [{ kind: 'kernel', stream: 1, start: 3_000, end: 103_000, blocks: 10 }] },
        { name: 'cudaHostRegister', start: 1_500, end: 110_000 },
        { name: 'cudaLaunchKernel', start: 111_000, end: 112_000, ops: [{ kind: 'kernel', stream: 2, start: 114_000, end: 214_000, blocks: 10 }] },
        { name: 'cudaDeviceSynchronize', start: 112_500, end: 216_000 },
      ],
    });
    // An implicit wait for the device's work, then 7 µs of pinning.
    const model = hostModel(trace, host);
    expect(model.waitKind[1]).toBe(WaitKind.Prefix);
    expect(model.cost[1]).toBe(7_000);
    expect(Math.abs(replay(trace, host).gpuSpanNs - gpuSpan(trace))).toBeLessThan(1_000);
    const e = estimate(trace, host, 'hoist-register')!;
    expect(e.predictedNs).toBeLessThan(110_000);
    expect(e.notes.join()).toMatch(/1 host registration calls between launches moved before the loop/);
    // The last sync stays; the other fixes find nothing of theirs.
    expect(tryEstimate(trace, host, 'hoist-alloc')).toEqual({ unavailable: 'no device allocation calls between launches' });
    expect(tryEstimate(trace, host, 'hoist-pinned-alloc')).toEqual({ unavailable: 'no pinned host allocation calls between launches' });
    expect(tryEstimate(trace, host, 'remove-host-blocking')).toEqual({ unavailable: 'no synchronize calls between launches' });
    // The diagnosis picks that fix by the finding's call family, and its saving is the cost.
    const f = diagnose(trace, host).findings.find((x) => x.kind === 'host-blocking-call')!;
    expect(f.callFamily).toBe('register');
    expect(f.whatIf).toMatchObject({ fix: expect.stringMatching(/pinned once/), predictedNs: e.predictedNs });
    expect(f.costNs).toBe(e.savedNs);
  });

  it('per-thread-stream forms of a sync (_ptsz) are found, replayed and removed like the plain call', () => {
    const { trace, host } = build({
      streams: { 1: 2, 2: 2 },
      calls: [
        { name: 'cudaLaunchKernel_ptsz', start: 0, end: 1_000, ops: [{ kind: 'kernel', stream: 1, start: 3_000, end: 103_000, blocks: 10 }] },
        { name: 'cudaStreamSynchronize_ptsz', start: 1_500, end: 105_000 },
        { name: 'cudaLaunchKernel_ptsz', start: 106_000, end: 107_000, ops: [{ kind: 'kernel', stream: 2, start: 109_000, end: 209_000, blocks: 10 }] },
        { name: 'cudaStreamSynchronize_ptsz', start: 107_500, end: 211_000 },
      ],
    });
    expect(hostModel(trace, host).waitKind[1]).toBe(1); // waits for the kernel of its stream
    const f = diagnose(trace, host).findings.find((x) => x.kind === 'host-blocking-call')!;
    expect(f.title).toMatch(/^cudaStreamSynchronize_ptsz blocked thread 1 1 time between launches/);
    expect(f.callFamily).toBe('sync');
    expect(f.whatIf!.predictedNs).toBeLessThan(110_000);
  });

  it('a pageable copy blocks its call; pinned, it runs at the pinned bandwidth and the host goes on', () => {
    const { trace, host } = build({
      streams: { 1: 2, 2: 2 },
      calls: [
        { name: 'cudaMemcpyAsync', start: 0, end: 1_001_000, ops: [{ kind: 'HtoD', stream: 1, start: 150_000, end: 1_000_000, host: 1, bytes: 10_000_000 }] },
        {
          name: 'cudaMemcpyAsync',
          start: 1_002_000,
          end: 2_003_000,
          ops: [{ kind: 'HtoD', stream: 2, start: 1_152_000, end: 2_002_000, host: 1, bytes: 10_000_000 }],
        },
      ],
    });
    expect(Math.abs(replay(trace, host).gpuSpanNs / gpuSpan(trace) - 1)).toBeLessThan(0.01);
    const e = estimate(trace, host, 'pin-pageable')!;
    // PCIe gen5 x16 × 0.806 = 50.8 GB/s: 10 MB in ~197 µs, twice on one engine.
    const copy = 10_000_000 / (3.938 * 16 * PCIE_EFFICIENCY);
    expect(e.predictedNs).toBeGreaterThanOrEqual(2 * copy);
    expect(e.predictedNs).toBeLessThan(2 * copy + 20_000);
    expect(e.notes.join()).toMatch(/PCIe link/);
  });
});

describe('pinned bandwidth', () => {
  it("from the recording's own pinned copies, else a reference, else the PCIe link, else unknown", () => {
    const concurrent = load('normalise-concurrent').trace;
    const own = pinnedBandwidth(concurrent);
    for (const b of own) {
      expect(b.source).toBe('recording');
      expect(b.gbPerS).toBeGreaterThan(40);
      expect(b.gbPerS).toBeLessThan(60);
    }
    const pageable = load('normalise-pageable').trace;
    expect(pinnedBandwidth(pageable).map((b) => b.source)).toEqual(['pcie', 'pcie']);
    const ref = referenceFrom(concurrent, 'normalise-concurrent');
    expect(pinnedBandwidth(pageable, undefined, ref).map((b) => b.source)).toEqual(['reference', 'reference']);
    const noLink: Trace = { ...pageable, devices: pageable.devices.map((d) => ({ ...d, pcieGeneration: null, pcieWidth: null })) };
    expect(pinnedBandwidth(noLink).map((b) => b.gbPerS)).toEqual([null, null]);
    const why = tryEstimate(noLink, load('normalise-pageable').host, 'pin-pageable');
    expect('unavailable' in why && why.unavailable).toMatch(/no pinned HtoD bandwidth/);
  });
});

describe('replay of the unchanged H100 recordings', () => {
  // 3%: the largest error is matmul sync-each's −2.7% — a 1 ms run made of
  // eight host round trips (sync wake-up, next launch) whose few-µs
  // latencies vary from one to the next; the model uses their median.
  const TOLERANCE = 0.03;
  it("reproduces every runner fixture's measured GPU span", () => {
    const rows: string[] = [];
    const errors: [string, number][] = [];
    for (const workload of WORKLOADS) {
      for (const scenario of SCENARIOS) {
        const { trace, host } = load(`${workload}-${scenario}`);
        const measured = gpuSpan(trace);
        const replayed = replay(trace, host).gpuSpanNs;
        const error = replayed / measured - 1;
        errors.push([`${workload}-${scenario}`, error]);
        rows.push(`${`${workload}-${scenario}`.padEnd(26)} ${us(measured).padStart(12)} ${us(replayed).padStart(12)} ${pct(error).padStart(7)}`);
      }
    }
    console.log(
      `replay, no fix (GPU span)\n${'recording'.padEnd(26)} ${'measured'.padStart(12)} ${'replayed'.padStart(12)} ${'error'.padStart(7)}\n${rows.join('\n')}`,
    );
    for (const [name, error] of errors) expect(Math.abs(error), name).toBeLessThan(TOLERANCE);
  });
});

describe('acceptance: the fixed run predicted within 15% of the measured fixed run', () => {
  const header = (target: string, wall: string) =>
    `${'scenario'.padEnd(26)} ${'fix'.padEnd(22)} ${'measured'.padStart(12)} ${'predicted'.padStart(11)} ${target.padStart(11)} ${'error'.padStart(7)}   ${'makespan'.padStart(11)} ${wall.padStart(11)}`;
  const row = (
    name: string,
    fix: FixId,
    e: { measuredNs: number; predictedNs: number; makespan: { predictedNs: number } },
    target: number,
    wall: number | null,
  ) =>
    `${name.padEnd(26)} ${fix.padEnd(22)} ${us(e.measuredNs).padStart(12)} ${us(e.predictedNs).padStart(11)} ${us(target).padStart(11)} ${pct(e.predictedNs / target - 1).padStart(7)}` +
    `   ${us(e.makespan.predictedNs).padStart(11)} ${wall === null ? '-'.padStart(11) : us(wall).padStart(11)}`;

  const cases: [string, FixId][] = [
    ['default-stream', 'move-default-stream'],
    ['pageable', 'pin-pageable'],
    ['sync-each', 'remove-host-blocking'],
  ];
  it('default-stream, pageable and sync-each of every workload, against the concurrent run', () => {
    const rows: string[] = [];
    const errors: [string, number][] = [];
    for (const workload of WORKLOADS) {
      const concurrent = load(`${workload}-concurrent`);
      const target = gpuSpan(concurrent.trace);
      // The pageable run has no pinned copies: the bandwidth the same workload reached with pinned memory.
      const reference = referenceFrom(concurrent.trace, `${workload}-concurrent`);
      for (const [scenario, fix] of cases) {
        const { trace, host } = load(`${workload}-${scenario}`);
        const r = tryEstimate(trace, host, fix, { reference });
        if ('unavailable' in r) throw new Error(`${workload}-${scenario}: ${r.unavailable}`);
        const e = r.estimate;
        expect(e.predictedNs, `${workload}-${scenario}`).toBeLessThan(e.measuredNs);
        errors.push([`${workload}-${scenario} (${fix})`, e.predictedNs / target - 1]);
        rows.push(row(`${workload}-${scenario}`, fix, e, target, concurrent.nvtxWall));
      }
    }
    console.log(
      `what-if (GPU span; makespan = first issue → last op end vs the concurrent run's NVTX issue+synchronize, for information)\n` +
        `${header('concurrent', 'conc. NVTX')}\n${rows.join('\n')}`,
    );
    for (const [name, error] of errors) expect(Math.abs(error), name).toBeLessThan(0.15);
  });

  // Python programs recorded with and without the cause, right after each
  // other on one H100 (test/gpu/scripts/numba_pinned_loop.py). Both sides in the
  // steady state, analyze()'s default: start-up (context, the kernel's JIT
  // compile in the first iteration) is cut off the same way from both.
  //  * numba_pinned_loop: `with cuda.pinned(h_in[i], h_out[i])` inside the
  //    loop, so 94 cuMemHostRegister and 94 cuMemHostUnregister calls
  //    between launches, each synchronizing the device; -once pins the same
  //    buffers once around the whole loop. Its kernels fill the device, so
  //    the fixed run is its 48 kernels back to back, copies hidden beside
  //    them.
  const PAIRS: [string, FixId, string][] = [['numba_pinned_loop', 'hoist-register', 'numba_pinned_loop-once']];
  it('Python programs, against the same program recorded with the fix', () => {
    const rows: string[] = [];
    const errors: [string, number][] = [];
    for (const [name, fix, fixedName] of PAIRS) {
      const { trace, host } = load(name);
      const target = gpuSpan(load(fixedName).trace);
      const r = tryEstimate(trace, host, fix);
      if ('unavailable' in r) throw new Error(`${name}: ${r.unavailable}`);
      const e = r.estimate;
      expect(e.predictedNs, name).toBeLessThan(e.measuredNs);
      errors.push([`${name} (${fix})`, e.predictedNs / target - 1]);
      rows.push(row(name, fix, e, target, null));
    }
    console.log(`what-if on Python programs (GPU span, steady state; the fixed run as recorded)\n${header('fixed run', '')}\n${rows.join('\n')}`);
    for (const [name, error] of errors) expect(Math.abs(error), name).toBeLessThan(0.15);
  });

  it('the findings carry the estimate, and it is their cost', () => {
    const f = load('normalise-sync-each').analysis.diagnosis.findings.find((x) => x.kind === 'host-blocking-call')!;
    expect(f.whatIf).toMatchObject({ fix: expect.stringMatching(/synchronization/) });
    expect(f.costNs).toBe(f.whatIf!.savedNs);
    expect(f.whatIf!.predictedNs).toBeLessThan(f.whatIf!.measuredNs);

    // Registration in the loop: the what-if of pinning once, chosen by the finding's call family.
    const pinned = load('numba_pinned_loop').analysis.diagnosis.findings.find((x) => x.kind === 'host-blocking-call' && x.callFamily === 'register')!;
    expect(pinned.whatIf).toMatchObject({ fix: expect.stringMatching(/pinned once/) });
    expect(pinned.costNs).toBe(pinned.whatIf!.savedNs);
    expect(pinned.severity).toBe('error');
  });

  it('no estimate where the fix does not apply, with the reason', () => {
    const { trace, host, analysis } = load('normalise-concurrent');
    expect(estimate(trace, host, 'pin-pageable')).toBeNull();
    expect(tryEstimate(trace, host, 'move-default-stream')).toEqual({ unavailable: 'no work on the legacy default stream' });
    expect(tryEstimate(trace, host, 'remove-host-blocking')).toEqual({ unavailable: 'no synchronize calls between launches' });
    expect(tryEstimate(trace, host, 'hoist-register')).toEqual({ unavailable: 'no host registration calls between launches' });
    // The diagnosis' own call form (its Context) works too.
    expect(estimate(analysis.diagnosis.context, 'move-default-stream')).toBeNull();
  });
});

describe('at scale', () => {
  it('replays 10 million operations', () => {
    const { trace, host } = syntheticReplay(10_000_000, 64, 1000);
    hostModel(trace, host);
    const r = replay(trace, host);
    // The synthetic recording's GPU work is bound by its stream order and engines, which the replay must reproduce.
    expect(Math.abs(r.gpuSpanNs / gpuSpan(trace) - 1)).toBeLessThan(0.01);
    // How long it takes (the requirement: a replay under ~3 s on the 2-core
    // development VM) depends on the machine and its load: measured by
    // `npm run bench -- --only responsiveness`, not asserted here.
  }, 120_000);
});
