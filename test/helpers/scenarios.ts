// What each stream scenario of the bundled runner must look like in a
// recording — one definition, checked twice: by the GPU tests on fresh
// recordings (test/gpu) and by the unit tests on the committed H100
// fixtures (test/analysis/recordings.test.ts). Uses node:assert, which
// both runners report.
import assert from 'node:assert/strict';
import { overlapByDevice } from '../../profiler/analysis/overlap.ts';
import { loadTrace, OpCategory, OpKind, type Trace } from '../../profiler/analysis/trace.ts';
import { openRecording } from '../../profiler/store/database.ts';
import { StreamFlags } from '../../profiler/store/enums.ts';

export const SCENARIOS = ['serial', 'default-stream', 'pageable', 'concurrent', 'events', 'priority', 'sync-each', 'multi-gpu'] as const;
export type Scenario = (typeof SCENARIOS)[number];

/** What the runner issued (its summary line, or its known structure). */
export interface Issued {
  kernels: number;
  h2d: number;
  d2h: number;
  chunks: number;
  devices: number;
}

export interface Loaded {
  trace: Trace;
  file: string;
}

export function loadRecording(file: string): Loaded {
  const db = openRecording(file, { readonly: true });
  try {
    return { trace: loadTrace(db), file };
  } finally {
    db.close();
  }
}

export function count(t: Trace, pred: (i: number) => boolean): number {
  let n = 0;
  for (let i = 0; i < t.ops.length; i++) if (pred(i)) n++;
  return n;
}
export function streamsWith(t: Trace, pred: (i: number) => boolean): Set<number> {
  const s = new Set<number>();
  for (let i = 0; i < t.ops.length; i++) if (pred(i)) s.add(t.ops.stream[i]!);
  return s;
}
export const isKernel = (t: Trace) => (i: number) => t.ops.kind[i] === OpKind.Kernel;
export const isCopy = (t: Trace) => (i: number) => t.ops.kind[i] === OpKind.Memcpy;
const flagsOf = (t: Trace, streamId: number) => t.streams.find((s) => s.id === streamId)?.flags ?? 0;

export function queryCount(file: string, sql: string): number {
  const db = openRecording(file, { readonly: true });
  try {
    return (db.prepare(sql).get() as { n: number }).n;
  } finally {
    db.close();
  }
}

/**
 * Asserts that the recording `l` of `workload` under `scenario` holds exactly
 * the issued work and shows what the scenario is known to do. Returns the
 * figures worth printing.
 */
export function expectScenario(workload: string, scenario: Scenario, l: Loaded, issued: Issued): Record<string, unknown> {
  const t = l.trace;
  assert.equal(count(t, isKernel(t)), issued.kernels, 'kernels');
  assert.equal(
    count(t, (i) => t.ops.category[i] === OpCategory.HtoD),
    issued.h2d,
    'HtoD copies',
  );
  assert.equal(
    count(t, (i) => t.ops.category[i] === OpCategory.DtoH),
    issued.d2h,
    'DtoH copies',
  );
  const ov = overlapByDevice(t).find((o) => o.all.count > 0)!;
  const pageable = () => queryCount(l.file, 'SELECT count(*) AS n FROM memcpys WHERE src_kind = 1 OR dst_kind = 1');
  const figures: Record<string, unknown> = {
    workload,
    scenario,
    kernels: count(t, isKernel(t)),
    copies: count(t, isCopy(t)),
    streams: streamsWith(t, () => true).size,
    overlapAll: ov.all.overlapFactor,
    overlapCompute: ov.compute.overlapFactor,
    busyMs: ov.all.union / 1e6,
  };
  switch (scenario) {
    case 'serial':
      assert.equal(streamsWith(t, () => true).size, 1, 'one stream');
      assert.ok(ov.all.overlapFactor! < 1.02, `nothing overlaps: ${ov.all.overlapFactor}`);
      break;
    case 'default-stream': {
      const kernelStreams = streamsWith(t, isKernel(t));
      assert.equal(kernelStreams.size, 1, 'kernels on one stream');
      assert.ok(flagsOf(t, [...kernelStreams][0]!) & StreamFlags.LegacyDefault, "the kernels' stream is the legacy default stream");
      assert.ok(streamsWith(t, isCopy(t)).size >= 2, 'copies on several created streams');
      assert.ok(ov.compute.overlapFactor! < 1.02, `kernels cannot overlap: ${ov.compute.overlapFactor}`);
      break;
    }
    case 'pageable':
      figures.pageableCopies = pageable();
      assert.equal(figures.pageableCopies, issued.h2d + issued.d2h, 'every copy from/to pageable memory');
      assert.ok(ov.all.overlapFactor! < 1.02, `pageable copies overlap nothing: ${ov.all.overlapFactor}`);
      break;
    case 'concurrent':
      assert.ok(streamsWith(t, () => true).size >= issued.chunks, 'a stream per chunk');
      assert.equal(pageable(), 0, 'no pageable copies');
      if (workload === 'normalise') assert.ok(ov.all.overlapFactor! > 1.5, `normalise overlap ${ov.all.overlapFactor} should exceed 1.5`);
      else assert.ok(ov.all.overlapFactor! > 1.05, `overlap ${ov.all.overlapFactor}`);
      break;
    case 'events':
      figures.waits = queryCount(l.file, 'SELECT count(*) AS n FROM syncs WHERE sync_type = 2');
      figures.eventRecords = queryCount(l.file, 'SELECT count(*) AS n FROM cuda_events');
      assert.ok((figures.waits as number) >= issued.chunks, `stream-wait-event syncs: ${figures.waits}`);
      assert.ok((figures.eventRecords as number) >= issued.chunks, `event records: ${figures.eventRecords}`);
      assert.equal(streamsWith(t, () => true).size, 3 * issued.devices, 'copy-in, compute and copy-out streams');
      break;
    case 'priority': {
      const used = streamsWith(t, () => true);
      const priorities = new Set(t.streams.filter((s) => used.has(s.id)).map((s) => s.priority));
      figures.priorities = [...priorities].join('/');
      assert.ok(priorities.size >= 2, `priorities seen: ${figures.priorities}`);
      break;
    }
    case 'sync-each':
      figures.deviceSyncs = queryCount(l.file, 'SELECT count(*) AS n FROM syncs WHERE sync_type = 4');
      assert.ok((figures.deviceSyncs as number) >= issued.chunks, `context synchronizations: ${figures.deviceSyncs}`);
      assert.ok(ov.all.overlapFactor! < 1.02, `nothing overlaps: ${ov.all.overlapFactor}`);
      break;
    case 'multi-gpu': {
      const used = new Set<number>();
      for (let i = 0; i < t.ops.length; i++) used.add(t.ops.device[i]!);
      figures.devicesUsed = used.size;
      assert.equal(used.size, issued.devices, 'work on every device');
      break;
    }
  }
  return figures;
}
