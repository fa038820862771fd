// Iterations: when an NVTX range repeats (a training step, a loop
// iteration), one row per instance — the GPU work it launched (span, busy
// time, overlap per device) and its worst finding — with the instances that
// stand out flagged: warm-up (the first instances, slower than the rest:
// JIT, cuBLAS/cuDNN initialisation, allocator growth) and outliers.
//
// Each instance is its own range scope (scope.ts: the calls and operations
// it owns, among all the range's instances), and its findings are its share
// of the whole range's (attribution.ts), so a row says what `report --range
// NAME#k` would say, and the rows share out `--range NAME`'s work and
// findings: nothing is in two rows, and the rows add up to the range.
import type { Db } from '../../store/database.ts';
import { instanceFindings } from './analyze.ts';
import type { Finding } from '../../contract/findings.ts';
import { communicationPart, deviceTime, type CommunicationInputs } from '../communication.ts';
import { readPeerCopyIds, readProcessFacts, type ProcessFacts } from '../load/communication.ts';
import type { RowSubset } from '../load/rows.ts';
import { rangeInstances, rangeNames, repeatingRanges } from '../load/ranges.ts';
import { readTraceTables, type TraceTables } from '../load/tables.ts';
import { overlapByDevice } from '../overlap.ts';
import { median, warmUpCount } from '../scope.ts';
import { opsOfEachInstance, type RangeInstance } from '../../cuda/nvtx-ranges.ts';
import { type TimelineColumns } from '../../native/columns.ts';
import type { IterationRow, Iterations } from '../../contract/iterations.ts';
import { gpuOrdinals, traceOf, type SpanCalls } from '../trace.ts';

// The ranges there are, read by load/ranges.ts: named here too, where the choice among them is.
export { rangeNames };

/** A range repeats when it has at least this many instances. */
export const MIN_ITERATIONS = 3;
/** An instance further than this from the median (relative), and beyond 3 MADs, is an outlier. */
const OUTLIER_SHARE = 0.2;

/**
 * The range to tabulate when none is named: among ranges with at least
 * MIN_ITERATIONS instances in one process (a job's step range repeats on
 * every rank; counted over the whole job, NCCL's ncclAllGather of its
 * set-up, once per rank, would repeat too), the one covering most time (the
 * outermost loop: a step covers the ranges nested in it). The user's own
 * ranges come before NCCL's (its API calls: in a job whose collectives
 * wait, ncclAllReduce covers more time than the step around it). Null when
 * nothing repeats.
 */
export function pickIterationRange(db: Db): string | null {
  const repeating = repeatingRanges(db).filter((r) => r.perProcess >= MIN_ITERATIONS);
  return (repeating.find((r) => !r.nccl) ?? repeating[0])?.name ?? null;
}

/**
 * One row per instance of `name` (throws nothing: an unknown name gives no
 * rows; the caller says so). `withFindings`: each row's top finding, its
 * share of the range's diagnosis — nearly all of the time (the range
 * diagnosed with its what-ifs: 20 of 21 s at 10 M operations), so the
 * timeline's row asks without it.
 */
export function iterationsOf(db: Db, columns: TimelineColumns, name: string, chosen: Iterations['chosen'] = 'named', withFindings = true): Iterations {
  const instances = rangeInstances(db, name);
  const findings = instances.length && withFindings ? instanceFindings(db, {}, columns, name, instances) : [];
  const rows = iterationRows(columns, instances, readStepTables(db), findings);
  return iterationsOfRows(name, rows, chosen, withFindings);
}

/** The small tables every row reads: read once for all instances (a job's rank summary: for its part's rows). */
export interface StepTables {
  tables: TraceTables;
  processes: Map<number, ProcessFacts>;
  /** The device-to-device copies between two GPUs: communication in a step's breakdown. */
  peerCopyIds: Set<number>;
}

/** `subset`: the rows of some processes (a part of a job: analysis/diagnosis/job.ts); `known`: what the caller read already. */
export function readStepTables(db: Db, subset?: RowSubset, known: Partial<Pick<StepTables, 'tables' | 'processes'>> = {}): StepTables {
  return { tables: known.tables ?? readTraceTables(db), processes: known.processes ?? readProcessFacts(db), peerCopyIds: readPeerCopyIds(db, subset) };
}

/**
 * One row per instance of `instances` (rangeInstances' of one range, or
 * every instance of some processes: a process's steps are numbered and
 * flagged among its own), over `columns` with their calls (which call
 * launched each operation). `instance` numbers them in the order given;
 * `findings`: each one's, in that order (none: every topFinding null).
 */
export function iterationRows(columns: TimelineColumns, instances: RangeInstance[], t: StepTables, findings: Finding[][] = []): IterationRow[] {
  const gpu = gpuOrdinals(t.tables.devices);
  const selections = opsOfEachInstance(columns, instances);
  const inputs: CommunicationInputs = { processes: t.processes, peerCopyIds: t.peerCopyIds, ncclRanges: [] };
  const rows = instances.map((inst, x) => analyseInstance(selections[x]!, t.tables, inputs, gpu, inst, x + 1, findings[x]?.[0]));
  // Each process's instances are its own steps (a job's ranks run theirs
  // side by side): numbered, and their warm-up and outliers found, per process.
  const byProcess = new Map<number, IterationRow[]>();
  for (const r of rows) {
    const own = byProcess.get(r.pid) ?? [];
    own.push(r);
    byProcess.set(r.pid, own);
    const p = t.processes.get(r.pid);
    r.step = own.length;
    r.rank = p?.rank ?? null;
    r.host = p?.host ?? null;
  }
  for (const own of byProcess.values()) flag(own);
  return rows;
}

/** Rows (iterationRows', or a job's of every rank) as the range's Iterations: the median of the steps past warm-up, the processes that ran them. */
export function iterationsOfRows(name: string, rows: IterationRow[], chosen: Iterations['chosen'], withFindings: boolean): Iterations {
  const steady = rows.filter((r) => !r.warmUp).map((r) => r.lengthNs);
  return { name, rows, medianNs: steady.length ? median(steady) : 0, chosen, processes: new Set(rows.map((r) => r.pid)).size, findings: withFindings };
}

/** An instance's row is of its GPU work: no calls. */
const NO_CALLS: SpanCalls = { length: 0, start: new Float64Array(0), end: new Float64Array(0) };

function analyseInstance(
  sel: TimelineColumns['ops'],
  tables: TraceTables,
  inputs: CommunicationInputs,
  gpu: (deviceId: number) => number,
  inst: RangeInstance,
  instance: number,
  top: Finding | undefined,
): IterationRow {
  const trace = traceOf(sel, NO_CALLS, tables);
  const { ops } = trace;
  let gpuStart = Infinity;
  let gpuEnd = -Infinity;
  for (let i = 0; i < ops.length; i++) {
    if (ops.start[i]! < gpuStart) gpuStart = ops.start[i]!;
    if (ops.end[i]! > gpuEnd) gpuEnd = ops.end[i]!;
  }
  const hasGpu = Number.isFinite(gpuStart);
  // The step's breakdown over its own GPU span: its operations are its own process's, so one entry per device.
  const spanNs = hasGpu ? gpuEnd - gpuStart : 0;
  const busy = new Map(communicationPart(trace, inputs).busy.map((b) => [b.deviceId, b]));
  return {
    instance,
    step: instance,
    pid: inst.pid,
    rank: null,
    host: null,
    tid: inst.tid,
    startNs: inst.startNs,
    endNs: inst.endNs,
    gpuStartNs: hasGpu ? gpuStart : null,
    gpuEndNs: hasGpu ? gpuEnd : null,
    lengthNs: hasGpu ? spanNs : inst.endNs - inst.startNs,
    operations: ops.length,
    devices: overlapByDevice(trace)
      .filter((o) => o.all.count > 0)
      .map((o) => {
        // A device whose operations all end before they start has none in the breakdown (malformed: counted for nothing).
        const b = busy.get(o.deviceId) ?? { pid: inst.pid, deviceId: o.deviceId, computeNs: 0, communicationNs: 0, hiddenNs: 0, computeOrCommNs: 0, busyNs: 0 };
        const { deviceId: _d, gpu: _g, ...time } = deviceTime(b, gpu(o.deviceId), spanNs);
        return { deviceId: o.deviceId, gpu: gpu(o.deviceId), busyNs: o.all.union, overlap: o.all.overlapFactor, time };
      }),
    topFinding: top ? { kind: top.kind, severity: top.severity, title: top.title, costNs: top.costNs } : null,
    warmUp: false,
    outlier: false,
  };
}

/**
 * Warm-up: the leading instances (from the first, without a gap) longer
 * than WARM_UP_FACTOR × the median of the others (scope.ts warmUpCount,
 * which `--range NAME#k`'s notes use too). Outliers: the others whose
 * length is further from that median than both OUTLIER_SHARE of it and
 * three median absolute deviations.
 */
function flag(rows: IterationRow[]): void {
  if (rows.length < 2) return;
  const lengths = rows.map((r) => r.lengthNs);
  const warm = warmUpCount(lengths);
  for (let x = 0; x < warm; x++) rows[x]!.warmUp = true;
  const steady = lengths.slice(warm);
  const mid = median(steady);
  const mad = median(steady.map((v) => Math.abs(v - mid)));
  for (let x = warm; x < rows.length; x++) {
    const off = Math.abs(lengths[x]! - mid);
    rows[x]!.outlier = off > OUTLIER_SHARE * mid && off > 3 * mad;
  }
}
