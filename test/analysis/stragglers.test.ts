// Stragglers (issue 13, part 4): collective instances matched across ranks,
// arrival skew, the rank last most often and the wait it caused.
//
// The jobs here are CONSTRUCTED per-rank recordings (test/helpers/rank-recordings.ts,
// written through RecordingWriter, not recorded on GPUs: per step three
// compute kernels, then an NCCL all-reduce — all-gather every 10th step —
// that ends at the same true time on every rank ± the jitter; each rank's
// compute takes 300–500 µs at random), merged into one job by the real
// `streamscope merge` code (profiler/merge), then analysed as a user's job
// is: analyze() on the merged file. One rank's compute can be made D longer
// every step (RankSpec.delay): that rank must be named, its skew and the
// others' wait follow from D.
//
// Also on the real torchrun fixtures (one rank each: nothing to match, no
// error) and the matching's edge cases on the real merge of constructed
// ranks (a rank that misses collectives, a scope cut between two ranks'
// starts of one instance).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyze, type Analysis } from '../../profiler/analysis/diagnosis/analyze.ts';
import { sliceByStart } from '../../profiler/native/columns.ts';
import { binomialTail, stragglersOf } from '../../profiler/analysis/diagnosis/stragglers.ts';
import { loadTrace } from '../../profiler/analysis/trace.ts';
import type { Stragglers } from '../../profiler/contract/stragglers.ts';
import { readProcessFacts } from '../../profiler/analysis/load/communication.ts';
import type { Scope } from '../../profiler/contract/scope.ts';
import { mergeRecordings } from '../../profiler/merge/merge.ts';
import { repoRoot } from '../../profiler/native/paths.ts';
import { RecordingQuery } from '../../profiler/query/recording-query.ts';
import { openRecording } from '../../profiler/store/database.ts';
import { tempDir } from '../helpers/native.ts';
import { writeRankRecording } from '../helpers/rank-recordings.ts';

const JOB = 1_795_000_000_000_000_000n; // true time of the job's start, ns since the epoch
const JITTER = 1_000; // ± 1 µs on each all-reduce's end
const STEPS = 30;

let dir: string;
beforeAll(() => {
  dir = tempDir('stragglers');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

interface JobOptions {
  ranks: number;
  delay?: { rank: number; ns: number };
  /** Steps per rank (default STEPS). */
  steps?: (rank: number) => number;
  /** Host clock offset per rank (default 0): merge must undo it before arrivals can be compared. */
  clockOffsetNs?: (rank: number) => number;
  /** merge's clock alignment (default: by the collectives). */
  align?: 'collectives' | 'wall-clock';
}

const hostOf = (rank: number) => `node-${Math.floor(rank / 2)}`;

/** Constructed per-rank recordings, two ranks per host, merged by the real merge; the merged file. */
function job(name: string, o: JobOptions): string {
  const files = Array.from({ length: o.ranks }, (_, rank) => {
    const file = path.join(dir, `${name}-rank${rank}.sqlite`);
    writeRankRecording(
      {
        file,
        host: hostOf(rank),
        rank,
        pid: 4000 + rank,
        clockOffsetNs: o.clockOffsetNs?.(rank) ?? 0,
        originNs: JOB + BigInt(rank * 123_457),
        steps: o.steps?.(rank) ?? STEPS,
        jitterNs: JITTER,
        seed: 77 + rank * 13,
        worldSize: o.ranks,
        delay: o.delay,
      },
      JOB,
    );
    // The recorder stores each process's host (processes.host); RecordingWriter leaves it to the importer.
    const db = openRecording(file);
    try {
      db.prepare('UPDATE processes SET host = ?').run(hostOf(rank));
    } finally {
      db.close();
    }
    return file;
  });
  const out = path.join(dir, `${name}.sqlite`);
  mergeRecordings(files, out, { overwrite: true, align: o.align });
  return out;
}

function analysed(file: string, scope: Scope = { kind: 'whole' }): Analysis {
  const db = openRecording(file);
  try {
    return analyze(db, { scope });
  } finally {
    db.close();
  }
}

describe('a rank slowed on purpose (constructed ranks, merged by the real merge)', () => {
  const W = 4;
  const D = 1_000_000; // rank 2's compute is 1 ms longer every step: far more than the ranks' own 200 µs spread
  let a: Analysis;
  beforeAll(() => {
    // node-1's clock (ranks 2 and 3) 2.5 ms ahead: the comparison of arrivals needs merge's alignment.
    a = analysed(job('delayed', { ranks: W, delay: { rank: 2, ns: D }, clockOffsetNs: (r) => (r >= 2 ? 2_500_000 : 0) }));
  });

  it('matches every step across the 4 ranks, nothing left over', () => {
    const s = a.stragglers;
    expect(s.present).toBe(true);
    expect(s.ranks.map((r) => r.rank)).toEqual([0, 1, 2, 3]);
    expect(s.instances).toBe(STEPS);
    expect(s.gaps).toEqual({ partialInstances: 0, partialKernels: 0, leadingKernels: 0, unsynchronizedInstances: 0, pointToPointKernels: 0 });
    // All-reduce 27 steps, all-gather every 10th (steps 9, 19, 29).
    expect(Object.fromEntries(s.collectives.map((c) => [c.collective, c.instances]))).toEqual({ 'all-reduce': 27, 'all-gather': 3 });
  });

  it("names the delayed rank; its skew is D within the ranks' own spread, the wait D × (world − 1) per step", () => {
    const s = a.stragglers;
    const st = s.straggler!;
    expect(st).not.toBeNull();
    expect(st).toMatchObject({ rank: 2, host: 'node-1', gpu: 0, lastCount: STEPS, instances: STEPS });
    const r2 = s.ranks.find((r) => r.rank === 2)!;
    // Each step: rank 2 arrives D + (its work − another's) after the others, the works 300–500 µs each: skew within D ± 200 µs.
    expect(r2.maxSkewWhenLastNs!).toBeLessThanOrEqual(D + 200_000);
    expect(r2.meanSkewWhenLastNs!).toBeGreaterThanOrEqual(D - 200_000);
    expect(r2.meanSkewWhenLastNs!).toBeLessThanOrEqual(D + 200_000);
    for (const w of s.worst) expect(Math.abs(w.skewNs - D)).toBeLessThanOrEqual(200_000);
    // Wait: Σ over steps and the 3 others of (D + work_2 − work_other); the works' differences average out: within 5%.
    const expected = D * STEPS * (W - 1);
    expect(Math.abs(st.causedWaitNs - expected)).toBeLessThanOrEqual(0.05 * expected);
    expect(r2.causedWaitNs).toBe(st.causedWaitNs);
    // The others never arrive last, so they caused nothing; rank 2 waited for no one.
    for (const r of s.ranks.filter((x) => x.rank !== 2)) expect(r).toMatchObject({ lastCount: 0, causedWaitNs: 0, meanSkewWhenLastNs: null });
    expect(r2.waitedNs).toBe(0);
    expect(st.chance).toBeLessThan(1e-15); // (1/4)^30
    expect(st.waitShare).toBeGreaterThan(0.5); // of the others' time in the all-reduces, most was waiting
  });

  it("each worst instance lists every rank's kernel, the last one rank 2's, the wait as defined", () => {
    const s = a.stragglers;
    expect(s.worst.length).toBe(10);
    for (const w of s.worst) {
      expect(w.ranks.map((k) => k.pid)).toEqual(s.ranks.map((r) => r.pid));
      expect(w.ranks[w.last]!.pid).toBe(s.straggler!.pid);
      const latest = Math.max(...w.ranks.map((k) => k.startNs));
      expect(w.waitNs).toBe(w.ranks.reduce((t, k) => t + latest - k.startNs, 0));
      // One instance: its kernels end together (the common end ± the jitter, after merge's correction).
      const ends = w.ranks.map((k) => k.endNs);
      expect(Math.max(...ends) - Math.min(...ends)).toBeLessThanOrEqual(2 * JITTER + 2_000);
    }
    expect(s.worst.map((w) => w.waitNs)).toEqual([...s.worst.map((w) => w.waitNs)].sort((x, y) => y - x));
  });

  it("the diagnosis names it: a 'straggler-rank' finding with the wait as its cost and the worst instances' NCCL kernels as evidence", () => {
    const f = a.diagnosis.findings.filter((x) => x.kind === 'straggler-rank');
    expect(f.length).toBe(1);
    const st = a.stragglers.straggler!;
    expect(f[0]!.title).toMatch(/^Rank 2 \(node-1, GPU 0\) arrives last at 30 of 30 NCCL collectives: the other 3 ranks waited .* for it$/);
    expect(f[0]!.costNs).toBe(st.causedWaitNs);
    expect(f[0]!.pid).toBe(st.pid);
    expect(f[0]!.fix).toContain('Find why rank 2 (node-1, GPU 0) is late');
    const ids = a.stragglers.worst.flatMap((w) => w.ranks.map((k) => k.kernelId));
    expect([...f[0]!.evidence.kernels].sort((x, y) => x - y)).toEqual(ids.sort((x, y) => x - y));
    // Each of the others waited ~D per step of a ~2 ms step: a quarter of the span or more.
    expect(f[0]!.severity).toBe('error');
  });

  it('the steady state (the default scope) says the same', () => {
    const st = analysed(path.join(dir, 'delayed.sqlite'), { kind: 'steady-state' }).stragglers.straggler;
    expect(st).toMatchObject({ rank: 2 });
  });

  it('report: the Stragglers section and --json (reportVersion 9), through the CLI', () => {
    const report = (...args: string[]) =>
      spawnSync(process.execPath, [path.join(repoRoot, 'profiler/cli/streamscope.ts'), 'report', path.join(dir, 'delayed.sqlite'), '--whole', ...args], {
        encoding: 'utf8',
      });
    const json = report('--json');
    expect(json.status).toBe(0);
    const j = JSON.parse(json.stdout) as { reportVersion: number; stragglers: unknown };
    expect(j.reportVersion).toBe(9);
    expect(j.stragglers).toEqual(JSON.parse(JSON.stringify(a.stragglers)));
    const text = report();
    expect(text.status).toBe(0);
    expect(text.stdout).toContain('Stragglers (NCCL collectives matched across 4 ranks: 30 instances;');
    // Rank 2's row: last at all 30, nobody waited less; the straggler line names it with host and GPU.
    expect(text.stdout).toMatch(/^\s+node-1\s+2\/4\s+4002\s+0\s+30\s+30 100%\s+\S+ ms\s+0 ns\s/m);
    expect(text.stdout).toMatch(/^\s+straggler: rank 2 \(node-1, GPU 0\), last at 30 of 30; the other ranks waited \S+ ms for it/m);
    expect(text.stdout).toMatch(/^\s+all-reduce\s+27\s/m);
    expect(text.stdout).not.toContain('not analysed');
  });

  it("the API's stats carry the same", () => {
    const q = new RecordingQuery('delayed', path.join(dir, 'delayed.sqlite'));
    try {
      expect(q.stats({ kind: 'whole' }).stragglers).toEqual(a.stragglers);
    } finally {
      q.close();
    }
  });
});

describe('no straggler where no rank is delayed', () => {
  it('ranks arriving at random (300–500 µs of compute each, jittered ends): skew measured, nobody named, no finding', () => {
    for (const W of [2, 4]) {
      const a = analysed(job(`random-${W}`, { ranks: W }));
      const s = a.stragglers;
      expect(s.present).toBe(true);
      expect(s.instances).toBe(STEPS);
      expect(s.straggler).toBeNull();
      expect(a.diagnosis.findings.some((f) => f.kind === 'straggler-rank')).toBe(false);
      // Everyone is last sometimes, none at nearly all; the skew is the spread of the ranks' compute: under 200 µs.
      expect(Math.max(...s.ranks.map((r) => r.lastCount))).toBeLessThan(STEPS * 0.8);
      for (const r of s.ranks) if (r.maxSkewWhenLastNs !== null) expect(r.maxSkewWhenLastNs).toBeLessThanOrEqual(200_000);
      expect(s.ranks.reduce((t, r) => t + r.lastCount, 0)).toBe(STEPS);
    }
  });
});

describe('the chance rule', () => {
  it('binomialTail: P(X ≥ k) for X ~ Binomial(n, p), as summed exactly', () => {
    const exact = (n: number, k: number, p: number) => {
      let t = 0;
      for (let j = k; j <= n; j++) {
        let c = 1;
        for (let x = 0; x < j; x++) c = (c * (n - x)) / (x + 1);
        t += c * p ** j * (1 - p) ** (n - j);
      }
      return t;
    };
    for (const [n, k, p] of [
      [10, 9, 0.5],
      [30, 30, 0.5],
      [30, 18, 0.5],
      [20, 3, 0.5],
      [50, 5, 1 / 64],
      [40, 1, 0.25],
    ] as const)
      expect(binomialTail(n, k, p)).toBeCloseTo(exact(n, k, p), 12);
    // Two ranks, 10 instances: last at 9 of them is chance at about 1%, at all 10 it is not.
    expect(binomialTail(10, 9, 0.5)).toBeGreaterThan(0.01);
    expect(binomialTail(10, 10, 0.5)).toBeLessThan(0.01);
    // A million instances, no overflow: one standard deviation above the mean.
    expect(binomialTail(1_000_000, 500_500, 0.5)).toBeCloseTo(0.1587, 3);
  });
});

describe('what could not be matched is counted, not guessed', () => {
  it('a rank whose recording stops 5 steps early: those instances are partial, the rest analysed', () => {
    const a = analysed(job('short', { ranks: 3, delay: { rank: 0, ns: 800_000 }, steps: (r) => (r === 1 ? STEPS - 5 : STEPS) }));
    const s = a.stragglers;
    expect(s.instances).toBe(STEPS - 5);
    expect(s.gaps.partialInstances).toBe(5);
    expect(s.gaps.partialKernels).toBe(5 * 2); // ranks 0 and 2 ran them
    expect(s.gaps.unsynchronizedInstances).toBe(0);
    expect(s.straggler).toMatchObject({ rank: 0, lastCount: STEPS - 5 });
    // The report says what was left out.
    const text = spawnSync(process.execPath, [path.join(repoRoot, 'profiler/cli/streamscope.ts'), 'report', path.join(dir, 'short.sqlite'), '--whole'], {
      encoding: 'utf8',
    });
    expect(text.stdout).toContain('not analysed: 5 instances not run by every rank of its stream (10 kernels)');
  });

  it("a cut by start between the ranks' starts of one all-reduce (the steady state's): the leading kernels are dropped, not mismatched; a window there holds both, clipped", () => {
    const file = job('cut', { ranks: 2, delay: { rank: 1, ns: 800_000 } });
    // Step 5's all-reduce: rank 0 starts ~300–500 µs into the step, rank 1 (delayed) 800 µs after; cut in between.
    const db = openRecording(file);
    let cut: number;
    try {
      const starts = db
        .prepare(
          `SELECT p.rank, k.start_ns FROM kernels k JOIN streams s ON s.id = k.stream_id JOIN processes p ON p.pid = s.pid
           JOIN strings n ON n.id = k.name_id WHERE instr(n.value, 'nccl') > 0 ORDER BY k.start_ns`,
        )
        .raw()
        .all() as [number, number][];
      const r0 = starts.filter(([r]) => r === 0).map(([, t]) => t);
      const r1 = starts.filter(([r]) => r === 1).map(([, t]) => t);
      expect(r1[5]! - r0[5]!).toBeGreaterThan(500_000);
      cut = r0[5]! + 1;
    } finally {
      db.close();
    }
    // What starts after the cut, as the steady state selects from its start-up's end (scope.ts sliceByStart).
    const whole = analysed(file);
    const after = sliceByStart(whole.columns, cut, Infinity);
    const cutDb = openRecording(file);
    let s: Stragglers;
    try {
      s = stragglersOf(loadTrace(cutDb, after.ops, after.calls), readProcessFacts(cutDb));
    } finally {
      cutDb.close();
    }
    // Rank 1 has step 5's all-reduce after the cut, rank 0 not: rank 1's is dropped, and steps 6… match.
    expect(s.gaps.leadingKernels).toBe(1);
    expect(s.gaps.unsynchronizedInstances).toBe(0);
    expect(s.instances).toBe(STEPS - 6);
    expect(s.straggler).toMatchObject({ rank: 1, lastCount: STEPS - 6 });
    // A window from the cut holds what runs in it (scope.ts clipToWindow): rank 0's all-reduce, still running, clipped to start
    // there, so step 5 is matched on both ranks, and rank 1 still arrived last in it.
    const w = analysed(file, { kind: 'window', startNs: cut, endNs: 1e15 }).stragglers;
    expect(w.gaps.leadingKernels).toBe(0);
    expect(w.gaps.unsynchronizedInstances).toBe(0);
    expect(w.instances).toBe(STEPS - 5);
    expect(w.straggler).toMatchObject({ rank: 1, lastCount: STEPS - 5 });
  });

  it('kernels matched by order that do not end together are counted as unsynchronized and left out', () => {
    // node-1's clock 300 µs ahead and merged by the recorded times (--align wall-clock): the n-th
    // all-reduces of ranks 0 and 2 no longer end together, so they are not compared.
    const s = analysed(job('apart', { ranks: 3, clockOffsetNs: (r) => (r >= 2 ? 300_000 : 0), align: 'wall-clock' })).stragglers;
    expect(s.present).toBe(false);
    expect(s.instances).toBe(0);
    expect(s.gaps.unsynchronizedInstances).toBe(STEPS);
    expect(s.gaps.leadingKernels).toBe(0);
    expect(s.straggler).toBeNull();
  });
});

describe('recordings with one rank: nothing to match, no error', () => {
  for (const name of ['torchrun-node.sqlite', 'torchrun-rank.sqlite', 'matmul-multi-gpu-h200x2.sqlite']) {
    it(name, () => {
      const file = path.join(repoRoot, 'test/fixtures/recordings', name);
      const a = analysed(file);
      expect(a.stragglers.present).toBe(false);
      expect(a.stragglers.straggler).toBeNull();
      expect(a.diagnosis.findings.some((f) => f.kind === 'straggler-rank')).toBe(false);
      // The same from the trace and the process facts directly.
      const db = openRecording(file);
      try {
        expect(stragglersOf(a.trace, readProcessFacts(db))).toEqual(a.stragglers);
      } finally {
        db.close();
      }
    });
  }
});

// Two ranks time-sliced on one H100 (PROVENANCE.md: real in structure, not
// in timing): rank 1 slept 20 ms before each step's collectives. On one GPU
// the rank whose time slice comes second is late in any run, so only the
// delayed run is checked for the name; the two-GPU recordings (test/gpu)
// are the test of record.
describe('a real recording of two ranks, rank 1 delayed (nccl-1gpu-straggler)', () => {
  it('names rank 1, from the instances matched across the two ranks', () => {
    const a = analysed(path.join(repoRoot, 'test/fixtures/recordings/nccl-1gpu-straggler.sqlite'));
    expect(a.stragglers.present).toBe(true);
    expect(a.stragglers.ranks.map((r) => r.rank)).toEqual([0, 1]);
    expect(a.stragglers.straggler?.rank).toBe(1);
    expect(a.stragglers.straggler!.lastCount / a.stragglers.straggler!.instances).toBeGreaterThan(0.8);
    const f = a.diagnosis.findings.find((x) => x.kind === 'straggler-rank');
    expect(f?.title).toMatch(/^Rank 1 /);
    expect(f?.costNs).toBe(a.stragglers.straggler!.causedWaitNs);
  });
});

describe('a real two-GPU job, rank 1 sleeping 20 ms before each of 20 steps (nccl-straggler-h200x2)', () => {
  it('names rank 1 and the time rank 0 waited for it', () => {
    const a = analysed(path.join(repoRoot, 'test/fixtures/recordings/nccl-straggler-h200x2.sqlite'));
    const s = a.stragglers.straggler!;
    expect(s.rank).toBe(1);
    expect(s.lastCount / s.instances).toBeGreaterThan(0.9);
    // Each step's first all-reduce waits for the sleep, less what rank 0 computed meanwhile.
    expect(s.causedWaitNs).toBeGreaterThan(0.5 * 19 * 20e6);
    expect(s.causedWaitNs).toBeLessThan(20 * 20e6);
    // The run without the sleep names nobody.
    expect(analysed(path.join(repoRoot, 'test/fixtures/recordings/nccl-serial-h200x2.sqlite')).stragglers.straggler).toBeNull();
  });
});
