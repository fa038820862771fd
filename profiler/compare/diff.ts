// The difference between two recordings of the same program, as the
// compare view and `streamscope diff` show it: run time, GPU busy time and
// overlap per device and kind, kernels matched by name, copy throughput by
// direction and memory kind, and which findings were fixed, are new,
// changed or stayed, each matched by what it is about (findings.ts); for multi-rank recordings also each rank against the same rank
// (ranks.ts) and the collectives. Pure: two analyses in, one summary out
// (shape: docs/FORMATS.md, "diff --json").
import type { Analysis } from '../analysis/diagnosis/analyze.ts';
import type { Communication } from '../contract/communication.ts';
import { DIFF_VERSION, type CollectiveDiff, type DeviceDiff, type DiffSummary } from '../contract/diff.ts';
import { readableNames } from '../contract/names.ts';
import { overlapByDevice, type DeviceOverlap } from '../analysis/overlap.ts';
import { gpuOrdinals } from '../analysis/trace.ts';
import { summarizeCopies, summarizeKernels } from '../analysis/summary.ts';
import type { Ns } from '../contract/time.ts';
import { delta } from './delta.ts';
import { diffFindings, findingPlaces } from './findings.ts';
import { isMultiRank, pairProcesses, rankDiffs, type DevicePair } from './ranks.ts';

function gpuSpan(x: Analysis): Ns | null {
  const { ops } = x.trace;
  if (ops.length === 0) return null;
  let s = Infinity;
  let e = -Infinity;
  for (let i = 0; i < ops.length; i++) {
    if (ops.start[i]! < s) s = ops.start[i]!;
    if (ops.end[i]! > e) e = ops.end[i]!;
  }
  return e - s;
}

export function diffRecordings(aFile: string, a: Analysis, bFile: string, b: Analysis): DiffSummary {
  const oa = overlapByDevice(a.trace).filter((o) => o.all.count > 0);
  const ob = overlapByDevice(b.trace).filter((o) => o.all.count > 0);
  // Multi-rank: each rank against the same rank, and GPUs through their ranks;
  // otherwise devices by position (first of A with first of B, ...).
  const multiRank = isMultiRank(a) || isMultiRank(b);
  const perRank = multiRank ? rankDiffs(a, b) : null;
  const pairs: DevicePair[] =
    perRank?.devices ??
    Array.from({ length: Math.max(oa.length, ob.length) }, (_, i) => ({ a: oa[i]?.deviceId ?? null, b: ob[i]?.deviceId ?? null, rank: null }));
  const byIdA = new Map(oa.map((o) => [o.deviceId, o]));
  const byIdB = new Map(ob.map((o) => [o.deviceId, o]));
  const devices = pairs.map((p, index) => deviceDiff(index, p, a, byIdA, b, byIdB));
  // Findings sit on the same device rows and, multi-rank, the same rank rows (pids differ between runs).
  const places = findingPlaces(pairs, multiRank ? pairProcesses(a.communication.ranks, b.communication.ranks) : null);

  const ka = new Map(summarizeKernels(a.trace).map((k) => [k.name, k]));
  const kb = new Map(summarizeKernels(b.trace).map((k) => [k.name, k]));
  const kernels = [...new Set([...ka.keys(), ...kb.keys()])]
    .map((name) => {
      const x = ka.get(name);
      const y = kb.get(name);
      return {
        name,
        demangledName: (x ?? y)!.demangledName,
        count: delta(x?.count ?? 0, y?.count ?? 0),
        totalNs: delta(x?.total ?? 0, y?.total ?? 0),
        meanNs: delta(x?.mean ?? null, y?.mean ?? null),
      };
    })
    .sort((p, q) => Math.abs(q.totalNs.delta ?? 0) - Math.abs(p.totalNs.delta ?? 0));

  const key = (c: { direction: string; srcKind: string; dstKind: string }) => `${c.direction}|${c.srcKind}|${c.dstKind}`;
  const ca = new Map(summarizeCopies(a.trace).map((c) => [key(c), c]));
  const cb = new Map(summarizeCopies(b.trace).map((c) => [key(c), c]));
  const copies = [...new Set([...ca.keys(), ...cb.keys()])].map((k) => {
    const x = ca.get(k);
    const y = cb.get(k);
    const [direction, srcKind, dstKind] = k.split('|') as [string, string, string];
    return {
      direction,
      srcKind,
      dstKind,
      bytes: delta(x?.bytes ?? 0, y?.bytes ?? 0),
      gbPerS: delta(x?.gigabytesPerSecond ?? null, y?.gigabytesPerSecond ?? null),
    };
  });

  return {
    diffVersion: DIFF_VERSION,
    a: aFile,
    b: bFile,
    scopeA: a.scope.label,
    scopeB: b.scope.label,
    gpuSpanNs: delta(gpuSpan(a), gpuSpan(b)),
    durationNs: delta(num(a.trace.meta.get('duration_ns')), num(b.trace.meta.get('duration_ns'))),
    devices,
    kernels,
    copies,
    // Kernels in findings are named as in the Kernels table (outputs label it with readableNames too).
    findings: diffFindings(a, b, places, (row) => devices[row]!.gpu, readableNames(kernels)),
    ranks: perRank?.ranks ?? null,
    collectives: diffCollectives(a.communication, b.communication),
  };
}

/** One device pair: its busy time and overlap factors, A → B (ids null: on one side only). */
function deviceDiff(index: number, p: DevicePair, a: Analysis, oa: Map<number, DeviceOverlap>, b: Analysis, ob: Map<number, DeviceOverlap>): DeviceDiff {
  const x = p.a === null ? undefined : oa.get(p.a);
  const y = p.b === null ? undefined : ob.get(p.b);
  const f = (o: DeviceOverlap | undefined, k: 'compute' | 'htod' | 'dtoh' | 'all') => o?.[k].overlapFactor ?? null;
  return {
    index,
    gpu: p.a !== null ? gpuOrdinals(a.trace.devices)(p.a) : p.b !== null ? gpuOrdinals(b.trace.devices)(p.b) : index,
    name: a.trace.devices.find((d) => d.id === p.a)?.name ?? b.trace.devices.find((d) => d.id === p.b)?.name ?? null,
    rank: p.rank,
    busyNs: delta(x?.all.union ?? null, y?.all.union ?? null),
    overlap: {
      compute: delta(f(x, 'compute'), f(y, 'compute')),
      htod: delta(f(x, 'htod'), f(y, 'htod')),
      dtoh: delta(f(x, 'dtoh'), f(y, 'dtoh')),
      all: delta(f(x, 'all'), f(y, 'all')),
    },
  };
}

/** NCCL kernels by collective, most time (on either side) first. */
function diffCollectives(a: Communication, b: Communication): CollectiveDiff[] {
  const ca = new Map(a.collectives.map((c) => [c.collective, c]));
  const cb = new Map(b.collectives.map((c) => [c.collective, c]));
  return [...new Set([...ca.keys(), ...cb.keys()])]
    .map((collective) => ({
      collective,
      count: delta(ca.get(collective)?.count ?? 0, cb.get(collective)?.count ?? 0),
      totalNs: delta(ca.get(collective)?.totalNs ?? 0, cb.get(collective)?.totalNs ?? 0),
    }))
    .sort((p, q) => Math.max(q.totalNs.a!, q.totalNs.b!) - Math.max(p.totalNs.a!, p.totalNs.b!));
}

function num(v: string | undefined): number | null {
  return v === undefined || v === '' ? null : Number(v);
}
