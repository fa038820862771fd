// The diff of two multi-rank jobs (profiler/compare/ranks.ts, streams.ts):
// ranks paired by rank, never by pid; each rank's streams paired within
// it; GPUs through their ranks; the collectives. The jobs are CONSTRUCTED
// per rank (test/helpers/rank-jobs.ts over rank-recordings.ts, through
// RecordingWriter, not recorded on GPUs) and merged by the real
// profiler/merge: job A runs each all-reduce after the step's compute
// (serialized), job B starts it 200 µs earlier, behind the compute, with
// other pids and the files merged in another order. Real recordings: the
// torchrun fixtures (rank 0 under two pids), and single-process fixtures,
// whose diff keeps its shape.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyze, type Analysis } from '../../profiler/analysis/diagnosis/analyze.ts';
import { overlapByDevice } from '../../profiler/analysis/overlap.ts';
import { diffRecordings } from '../../profiler/compare/diff.ts';
import { formatDiff } from '../../profiler/compare/format.ts';
import type { DiffSummary, RankDiff } from '../../profiler/contract/diff.ts';
import type { Scope } from '../../profiler/contract/scope.ts';
import { openRecording } from '../../profiler/store/database.ts';
import { tempDir } from '../helpers/native.ts';
import { JOB_STEPS, mergedJob } from '../helpers/rank-jobs.ts';

const fixture = (name: string) => path.resolve(import.meta.dirname, `../fixtures/recordings/${name}.sqlite`);

function analysed(file: string, scope?: Scope): Analysis {
  const db = openRecording(file, { readonly: true });
  try {
    return analyze(db, { scope, file });
  } finally {
    db.close();
  }
}

function diff(a: string, b: string, scope?: Scope): DiffSummary {
  return diffRecordings(a, analysed(a, scope), b, analysed(b, scope));
}

/** A file's answer to one query, read with SQLite alone. */
function sql<T>(file: string, query: string, ...params: unknown[]): T {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare(query).get(...params) as T;
  } finally {
    db.close();
  }
}

let dir: string;
let serial: string;
let overlapped: string;
let threeRanks: string;
let unrankedA: string;
let unrankedB: string;
beforeAll(() => {
  dir = tempDir('diff-ranks');
  serial = mergedJob(dir, 'serial', { ranks: 4, ranked: true, pid: (r) => 1000 + r });
  // Pid order is the reverse of rank order here, and the files are merged out of order:
  // pairing by pid, or by position in the file, would set rank 0 against rank 3 or 2.
  overlapped = mergedJob(dir, 'overlapped', { ranks: 4, ranked: true, pid: (r) => 2003 - r, mergeOrder: [3, 1, 0, 2], overlapNs: 200_000 });
  threeRanks = mergedJob(dir, 'three', { ranks: 3, ranked: true, pid: (r) => 3000 + r });
  unrankedA = mergedJob(dir, 'unranked-a', { ranks: 2, ranked: false, pid: (r) => 500 + r });
  unrankedB = mergedJob(dir, 'unranked-b', { ranks: 2, ranked: false, pid: (r) => 700 - r, mergeOrder: [1, 0] });
}, 120_000);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('diff of two multi-rank jobs (constructed per rank, merged)', () => {
  it('pairs ranks by rank, not pid or file order, with each rank’s time from the communication breakdown', () => {
    const a = analysed(serial);
    const b = analysed(overlapped);
    const d = diffRecordings(serial, a, overlapped, b);
    expect(d.diffVersion).toBe(5);
    expect(d.ranks!.map((r) => [r.label, r.pairedBy, r.a?.pid, r.b?.pid])).toEqual([
      ['rank 0', 'rank', 1000, 2003],
      ['rank 1', 'rank', 1001, 2002],
      ['rank 2', 'rank', 1002, 2001],
      ['rank 3', 'rank', 1003, 2000],
    ]);
    for (const r of d.ranks!) {
      const x = a.communication.ranks.find((p) => p.pid === r.a!.pid)!.total;
      const y = b.communication.ranks.find((p) => p.pid === r.b!.pid)!.total;
      expect(r.computeNs).toMatchObject({ a: x.computeNs, b: y.computeNs });
      expect(r.communicationNs).toMatchObject({ a: x.communicationNs, b: y.communicationNs, delta: y.communicationNs - x.communicationNs });
      expect(r.exposedNs).toMatchObject({ a: x.exposedNs, b: y.exposedNs });
      // The same compute on both sides (same seeds): the change is the all-reduce's placement only.
      expect(r.computeNs.delta).toBe(0);
      // Serialized: nothing hidden. Overlapped: ~198 µs of each 300–500 µs all-reduce hidden behind compute.
      expect(r.overlap.a).toBe(0);
      expect(r.overlap.b!).toBeGreaterThan(0.35);
      expect(r.overlap.b!).toBeLessThan(0.7);
      expect(r.communicationNs.b!).toBeGreaterThan(r.communicationNs.a!);
      // Its own GPU span: first to last operation of that process, by SQL on each file.
      const own = (file: string, pid: number) =>
        sql<{ s: number }>(file, 'SELECT max(k.end_ns) - min(k.start_ns) AS s FROM kernels k JOIN streams st ON st.id = k.stream_id WHERE st.pid = ?', pid).s;
      expect(r.gpuSpanNs).toMatchObject({ a: own(serial, r.a!.pid), b: own(overlapped, r.b!.pid) });
    }
  });

  it('pairs streams only within a rank: every pair’s streams belong to the two processes of its rank', () => {
    const d = diff(serial, overlapped);
    const owner = (file: string, streamId: number) => sql<{ pid: number }>(file, 'SELECT pid FROM streams WHERE id = ?', streamId).pid;
    for (const r of d.ranks!) {
      // Every rank has CUPTI streams 7 (compute) and 13 (NCCL): the same ids in every process.
      expect(r.streams.map((s) => [s.pairedBy, s.role, s.a?.cuptiStreamId, s.b?.cuptiStreamId])).toEqual([
        ['stream-id', 'compute', 7, 7],
        ['stream-id', 'communication', 13, 13],
      ]);
      for (const s of r.streams) {
        expect(owner(serial, s.a!.streamId)).toBe(r.a!.pid);
        expect(owner(overlapped, s.b!.streamId)).toBe(r.b!.pid);
      }
      expect(r.streams[0]!.ops).toMatchObject({ a: 3 * JOB_STEPS, b: 3 * JOB_STEPS, delta: 0 });
      expect(r.streams[1]!.ops).toMatchObject({ a: JOB_STEPS, b: JOB_STEPS });
    }
  });

  it('sets each rank’s GPU against the same rank’s GPU, whatever the order of devices in the files', () => {
    const d = diff(serial, overlapped);
    expect(d.devices.map((x) => x.rank)).toEqual(['rank 0', 'rank 1', 'rank 2', 'rank 3']);
    // Each constructed GPU's uuid names its host and rank: its busy time in each file.
    const busy = (file: string, rank: number) => {
      const x = analysed(file);
      const id = x.trace.devices.find((dev) => dev.uuid === `GPU-constructed-node-${Math.floor(rank / 2)}-${rank}`)!.id;
      return overlapByDevice(x.trace).find((o) => o.deviceId === id)!.all.union;
    };
    for (const [rank, x] of d.devices.entries()) expect(x.busyNs).toMatchObject({ a: busy(serial, rank), b: busy(overlapped, rank) });
  });

  it('collectives before → after: the same counts, more time in the overlapped job', () => {
    const d = diff(serial, overlapped);
    const gathers = 4 * Math.floor(JOB_STEPS / 10); // every tenth step all-gathers (rank-recordings.ts)
    expect(d.collectives.map((c) => [c.collective, c.count.a, c.count.b])).toEqual([
      ['all-reduce', 4 * JOB_STEPS - gathers, 4 * JOB_STEPS - gathers],
      ['all-gather', gathers, gathers],
    ]);
    expect(d.collectives[0]!.totalNs.delta!).toBeGreaterThan(0);
  });

  it('a rank in one job only is a row with the other side empty, and text says so', () => {
    const d = diff(serial, threeRanks);
    const only = d.ranks!.find((r) => r.rank === 3)!;
    expect(only).toMatchObject({ label: 'rank 3', a: { pid: 1003 }, b: null });
    expect(only.gpuSpanNs).toMatchObject({ b: null, delta: null });
    expect(only.streams.every((s) => s.pairedBy === null && s.b === null)).toBe(true);
    expect(d.ranks!.filter((r) => r.a && r.b).map((r) => r.rank)).toEqual([0, 1, 2]);
    expect(formatDiff(d)).toMatch(/^Ranks \(4 paired by rank, 0 by pid order; only in A: rank 3; only in B: none\)$/m);
    // The reverse: only in B.
    expect(formatDiff(diff(threeRanks, serial))).toMatch(/only in A: none; only in B: rank 3\)$/m);
  });

  it('without ranks recorded, processes are paired in pid order', () => {
    const d = diff(unrankedA, unrankedB);
    expect(d.ranks!.map((r) => [r.pairedBy, r.rank, r.label])).toEqual([
      ['pid-order', null, 'pid 500 / 699'],
      ['pid-order', null, 'pid 501 / 700'],
    ]);
    for (const r of d.ranks!) expect(r.streams.every((s) => s.pairedBy === 'stream-id')).toBe(true);
  });

  it('text: a row per rank with its change, streams per rank, the collectives', () => {
    const text = formatDiff(diff(serial, overlapped));
    expect(text).toMatch(/^\s+rank 2\s+1002 → 2001\s+\S+ ms → \S+ ms/m);
    expect(text).toMatch(/^\s+rank 0\s+.*0% → \d\d% \+\d\d pt\s*$/m);
    expect(text).toMatch(/^\s+rank 3\s+0 → 0\s+13 → 13\s+communication\s+40 → 40/m);
    expect(text).toMatch(/^\s+all-reduce\s+144 → 144\s/m);
    expect(text).toMatch(/^\s+rank 1 · 0: constructed GPU/m);
  });
});

describe('diff of real recordings', () => {
  it('torchrun: rank 0 under one recorder per node (pid 554) against one per rank (pid 484) is one row', () => {
    const d = diff(fixture('torchrun-node'), fixture('torchrun-rank'));
    expect(d.ranks!.map((r) => [r.label, r.a?.pid, r.b?.pid])).toEqual([['rank 0', 554, 484]]);
    const r: RankDiff = d.ranks![0]!;
    expect(r.streams.length).toBeGreaterThan(0);
    expect(r.streams.every((s) => s.a !== null && s.b !== null && s.a.cuptiStreamId === s.b.cuptiStreamId)).toBe(true);
  });

  it('a recording of three processes against itself: every process paired with itself, nothing changed', () => {
    const d = diff(fixture('multiprocess_cupy'), fixture('multiprocess_cupy'));
    expect(d.ranks!.length).toBeGreaterThan(1);
    for (const r of d.ranks!) {
      expect(r.pairedBy).toBe('pid-order');
      expect(r.a!.pid).toBe(r.b!.pid);
      expect(r.gpuSpanNs.delta).toBe(0);
      for (const s of r.streams) expect([s.pairedBy, s.a!.streamId, s.busyNs.delta]).toEqual(['stream-id', s.b!.streamId, 0]);
    }
  });

  it('two single-process recordings keep the diff they had: no rank rows, no collectives, devices by position', () => {
    const d = diff(fixture('normalise-default-stream'), fixture('normalise-concurrent'));
    expect(d.ranks).toBeNull();
    expect(d.collectives).toEqual([]);
    expect(d.devices.map((x) => [x.index, x.gpu, x.rank])).toEqual([[0, 0, null]]);
    const text = formatDiff(d);
    expect(text).not.toMatch(/^(Ranks|Streams of each rank|Collectives)/m);
    expect(text.split('\n').filter((l) => /^[A-Z]/.test(l))).toEqual([
      'StreamScope diff',
      'Devices (busy = union of GPU work; overlap = sum of busy / union; 1.00 = nothing overlapped)',
      'Findings',
      'Kernels (matched by name; biggest change in total time first)',
      'Copies and memsets',
    ]);
  });
});
