// A job's iterations from its ranks' summaries (profiler/job/iterations.ts,
// issue 29), on the real data-parallel jobs recorded on H200s with a
// `train_step` NVTX range (test/fixtures/ddp: two ranks; four ranks, DDP,
// all-reduces by hand, FSDP): each rank's steps, placed on the job's clock
// and ids from the summaries alone, are the merged recording's own
// iterations (`report --iterations` of the merged file: iterationsOf),
// compared rank by rank and step by step — times, GPU span, operations,
// per-device busy time and breakdown, flags, even the merged file's
// numbering of the instances — also where a file is read in parts (a
// node's recording of torchrun and its rank). Each step's breakdown adds up
// to its span.
// Then the CLI (`report A.sqlite B.sqlite … --iterations`, text and JSON),
// and a job whose recordings picked different ranges, or none.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { iterationsOf } from '../../profiler/analysis/diagnosis/iterations.ts';
import type { IterationRow, Iterations, JobIterations } from '../../profiler/contract/iterations.ts';
import { jobIterations } from '../../profiler/job/iterations.ts';
import { analyzeJobOfSummaries } from '../../profiler/job/of-summaries.ts';
import { buildRankSummary, type RankSummary } from '../../profiler/job/summary.ts';
import { mergeRecordings } from '../../profiler/merge/merge.ts';
import { loadTimelineColumns } from '../../profiler/native/addon.ts';
import { repoRoot } from '../../profiler/native/paths.ts';
import { openRecording } from '../../profiler/store/database.ts';
import { STEPS_ROW } from '../../profiler/store/rank-summary.ts';

const fixtures = path.resolve(import.meta.dirname, '../fixtures/ddp');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'job-iterations-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** Copies of recordings (a reader migrates an older file in place; summarize writes into them). */
function copies(from: string[]): string[] {
  const to = fs.mkdtempSync(path.join(tmp, 'job-'));
  return from.map((f) => {
    const file = path.join(to, path.basename(f));
    fs.copyFileSync(f, file);
    return file;
  });
}

const JOBS = [
  { name: 'two-rank ddp', files: [0, 1].map((k) => path.join(fixtures, `ddp-rank${k}.sqlite`)), steps: 10 },
  ...['ddp', 'fsdp', 'serial'].map((shape) => ({
    name: `four-rank ${shape}`,
    files: [0, 1, 2, 3].map((k) => path.join(fixtures, `four-ranks/${shape}-rank${k}.sqlite`)),
    steps: 6,
  })),
];

/** The merged recording's iterations of the range, as `report MERGED --iterations` computes them (without findings). */
function mergedIterations(files: string[], name: string): Iterations {
  const out = path.join(path.dirname(files[0]!), 'merged.sqlite');
  mergeRecordings(files, out);
  const db = openRecording(out, { readonly: true });
  try {
    const { ops, calls } = loadTimelineColumns(out);
    return iterationsOf(db, { ops, calls }, name, 'picked', false);
  } finally {
    db.close();
  }
}

const byRankAndStep = (rows: IterationRow[]) => new Map(rows.map((r) => [`${r.rank}:${r.step}`, r]));

function jobOf(files: string[]): { summaries: RankSummary[]; it: JobIterations | null } {
  const summaries = files.map((f) => buildRankSummary(f, 'whole'));
  return { summaries, it: jobIterations(summaries, analyzeJobOfSummaries(summaries).placement) };
}

describe.each(JOBS)('the $name job', (j) => {
  const files = copies(j.files);

  it("each rank's steps from its summary are the merged recording's, placed on its clock and ids", () => {
    const { summaries, it: job } = jobOf(files);
    for (const s of summaries) {
      expect(s.iterations?.name).toBe('train_step');
      expect(s.iterations?.rows.map((r) => r.step)).toEqual(Array.from({ length: j.steps }, (_, k) => k + 1));
    }
    const merged = mergedIterations(files, 'train_step');
    expect(job).not.toBeNull();
    expect(job!.without).toEqual([]);
    expect(job!.rows.length).toBe(files.length * j.steps);
    expect(merged.rows.length).toBe(job!.rows.length);
    const theirs = byRankAndStep(merged.rows);
    for (const ours of job!.rows) {
      const m = theirs.get(`${ours.rank}:${ours.step}`)!;
      expect(m, `rank ${ours.rank} step ${ours.step}`).toBeDefined();
      // Times on the job's clock (the merge moves each recording's by its shift), ids the merge's, the instance numbered as the merged file numbers it.
      expect(ours).toEqual(m);
    }
    expect(job!.medianNs).toBe(merged.medianNs);
    expect(job!.processes).toBe(files.length);
  });

  it("each step's breakdown adds up: compute + exposed + copies + idle = its GPU span, hidden + exposed = communication", () => {
    const { it: job } = jobOf(files);
    for (const r of job!.rows) {
      expect(r.devices.length).toBeGreaterThan(0);
      for (const d of r.devices) {
        const t = d.time;
        expect(t.spanNs).toBe(r.gpuEndNs! - r.gpuStartNs!);
        expect(t.computeNs + t.exposedNs + t.copyNs + t.idleNs).toBe(t.spanNs);
        expect(t.hiddenNs + t.exposedNs).toBe(t.communicationNs);
        expect(t.idleNs).toBeGreaterThanOrEqual(0);
        // A data-parallel step all-reduces its gradients: communication in every step.
        expect(t.communicationNs).toBeGreaterThan(0);
        expect(d.busyNs).toBe(t.spanNs - t.idleNs);
      }
    }
  });
});

describe('a recording per node, torchrun recorded with its rank (two H200 nodes: nccl-node0/1-h200x2), its rows before the origin', () => {
  const files = copies([0, 1].map((k) => path.join(fixtures, `../recordings/nccl-node${k}-h200x2.sqlite`)));

  it("each file is read part by part (the rank, its launcher); the rank's steps are the merged recording's", () => {
    const { summaries, it: job } = jobOf(files);
    expect(summaries.map((s) => s.parts.length)).toEqual([2, 2]);
    const merged = mergedIterations(files, job!.name);
    expect(job!.name).toBe('step');
    expect(job!.processes).toBe(merged.processes);
    expect(job!.rows).toEqual(merged.rows);
    expect(job!.medianNs).toBe(merged.medianNs);
  });
});

const cli = path.join(repoRoot, 'profiler/cli/streamscope.ts');
const run = (args: string[]) => {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
};

describe('report A.sqlite B.sqlite … --iterations', () => {
  const files = copies(JOBS[1]!.files);

  it("prints every rank's steps with their breakdown; --json carries them, as the summaries give them", () => {
    const text = run(['report', ...files, '--iterations']);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(
      /Iterations of NVTX range 'train_step' \(the repeating range covering most time\): 24 instances, 6 on each of 4 ranks, median /,
    );
    const table = text.stdout.slice(text.stdout.indexOf('Iterations of NVTX range'));
    expect(table).toMatch(/ rank +pid +step +instance +starts +GPU span +ops +GPU +busy +overlap +comm +exposed +idle\n/);
    const rows = table.split('\n').filter((l) => /^ +\d +\d+ +#\d+ +#\d+ /.test(l));
    expect(rows.map((l) => l.trim().split(/\s+/).slice(0, 3).join(' ').replace(/ \d+ /, ' '))).toEqual(
      [0, 1, 2, 3].flatMap((rank) => Array.from({ length: 6 }, (_, k) => `${rank} #${k + 1}`)),
    );
    // Without findings (they cost a diagnosis of every rank): no column for them.
    expect(table).not.toMatch(/top finding/);

    const json = run(['report', ...files, '--iterations', '--json']);
    expect(json.code, json.stderr).toBe(0);
    const report = JSON.parse(json.stdout) as { iterations: JobIterations };
    const { it: job } = jobOf(files);
    expect(report.iterations).toEqual(job);
    expect(report.iterations.rows.every((r) => r.devices.every((d) => d.time.exposedNs >= 0))).toBe(true);
  }, 60_000);

  it("the steps are stored apart from the scopes' summaries, and read only when asked", () => {
    const job = copies(JOBS[0]!.files);
    const built = run(['summarize', ...job]);
    expect(built.code, built.stderr).toBe(0);
    const db = openRecording(job[0]!);
    try {
      const rows = db.prepare('SELECT scope, payload FROM rank_summary ORDER BY scope').all() as { scope: string; payload: string }[];
      expect(rows.map((r) => r.scope)).toEqual(['steady-state', STEPS_ROW, 'whole']);
      // Once, not in each scope's payload; the rank's own steps (in its ids and clock), as built.
      for (const r of rows) if (r.scope !== STEPS_ROW) expect(Object.keys(JSON.parse(r.payload) as object)).not.toContain('iterations');
      const steps = JSON.parse(rows.find((r) => r.scope === STEPS_ROW)!.payload) as Iterations;
      expect(steps).toEqual(buildRankSummary(job[0]!, 'whole').iterations);
      expect(steps.rows).toHaveLength(10);
      // Damaged: a report reads none of them…
      db.prepare('UPDATE rank_summary SET payload = ? WHERE scope = ?').run('{"name": "train_st', STEPS_ROW);
    } finally {
      db.close();
    }
    const report = run(['report', ...job, '--json']);
    expect(report.code, report.stderr).toBe(0);
    expect(report.stderr).not.toMatch(/summarized/);
    // … and the iterations, which do, name the file and what to do.
    const iterations = run(['report', ...job, '--iterations']);
    expect(iterations.code).toBe(2);
    expect(iterations.stderr).toContain(
      `${job[0]}: has damaged steps in its summary (rank_summary 'steps'): streamscope summarize --force ${job[0]} builds them again`,
    );
    // Steps made stale (the file written again since, as far as its fingerprint says): the summary is not current, and
    // `summarize` builds it again.
    const stale = openRecording(job[1]!);
    stale.prepare('UPDATE rank_summary SET fingerprint = ? WHERE scope = ?').run('stale', STEPS_ROW);
    stale.close();
    const again = run(['summarize', job[1]!]);
    expect(again.stderr).toMatch(/ddp-rank1\.sqlite: summarized in [\d.]+ s, stored in it/);
  }, 60_000);

  it('recordings whose step ranges differ: the range most repeat, the others named with theirs (or none)', () => {
    const other = copies([path.join(fixtures, '../recordings/nvtx_nvtx.sqlite'), path.join(fixtures, '../recordings/normalise-concurrent.sqlite')]);
    const job = [...copies(JOBS[0]!.files), ...other];
    const { it } = jobOf(job);
    expect(it!.name).toBe('train_step');
    expect(new Set(it!.rows.map((r) => r.rank))).toEqual(new Set([0, 1]));
    expect(it!.without).toEqual([
      { file: other[0], ranks: [], picked: 'ss_nvtx_main' },
      { file: other[1], ranks: [], picked: null },
    ]);
    const text = run(['report', ...job, '--iterations']);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/20 instances, 10 on each of 2 ranks/);
    expect(text.stdout).toMatch(/note: the recordings' step ranges differ: 2 have no rows of 'train_step' \(the range most of them repeat\):\n/);
    expect(text.stdout).toContain(`  ${other[0]}: its repeating range is 'ss_nvtx_main'\n`);
    expect(text.stdout).toContain(`  ${other[1]}: no NVTX range repeats 3 or more times\n`);

    // No recording with a repeating range: none, said.
    const none = run(['report', other[1]!, ...copies([path.join(fixtures, '../recordings/normalise-serial.sqlite')]), '--iterations', '--json']);
    expect(none.code, none.stderr).toBe(0);
    expect((JSON.parse(none.stdout) as { iterations: null }).iterations).toBeNull();
  }, 60_000);
});
