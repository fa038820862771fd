// `streamscope summarize` and `streamscope report A.sqlite B.sqlite …` as a
// user runs them (child processes), on the real two-rank job with one rank
// slowed (test/fixtures/ddp): the job reported from its ranks' summaries —
// built for the report only, then stored by summarize and read — and what
// is refused with several recordings.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../profiler/native/paths.ts';
import type { JobReport } from '../../profiler/report/report.ts';
import { tempDir } from '../helpers/native.ts';

const cli = path.join(repoRoot, 'profiler/cli/streamscope.ts');
const run = (args: string[]) => {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
};
const fixtures = path.resolve(import.meta.dirname, '../fixtures/ddp');

let dir: string;
let ranks: string[];
beforeAll(() => {
  dir = tempDir('cli-job-report');
  ranks = [0, 1].map((k) => {
    const file = path.join(dir, `slow-rank${k}.sqlite`);
    fs.copyFileSync(path.join(fixtures, `slow-rank${k}.sqlite`), file);
    return file;
  });
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('a job of several recordings', () => {
  it('report: built for the report only (said), the straggler named; summarize stores them; the report then reads them, the same', () => {
    const first = run(['report', ...ranks, '--json']);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toMatch(
      /2 of 2 recordings had no current summary and were summarized for this report only: streamscope summarize .*slow-rank0\.sqlite/,
    );
    const report = JSON.parse(first.stdout) as JobReport;
    expect(report.job.readBy).toBe('summary');
    expect(report.job.ranks).toBe(2);
    expect(report.job.clocks!.map((c) => c.clock)).toEqual(['reference', 'collectives']);
    expect(report.findings.map((f) => f.kind)).toEqual(['straggler-rank']);
    expect(report.stragglers.straggler?.rank).toBe(1);

    const sum = run(['summarize', ...ranks]);
    expect(sum.code, sum.stderr).toBe(0);
    expect(sum.stderr).toMatch(/slow-rank0\.sqlite: summarized in [\d.]+ s, stored in it/);
    // Summarized together: both steady states cut where the job's start-up ended.
    expect(sum.stderr).toMatch(/2 recordings \(2 summarized now, every steady state cut where the job started\)/);
    const kept = run(['summarize', ...ranks]);
    expect(kept.stderr).toMatch(/slow-rank1\.sqlite: its summary is current \(kept; --force builds it again\)/);

    const second = run(['report', ...ranks, '--json']);
    expect(second.code).toBe(0);
    expect(second.stderr).toBe('');
    const again = JSON.parse(second.stdout) as JobReport;
    expect({ ...again, job: { ...again.job, seconds: 0 } }).toEqual({ ...report, job: { ...report.job, seconds: 0 } });

    const text = run(['report', ...ranks, '--whole']);
    expect(text.stdout).toMatch(/job {7}2 ranks \(processes with GPU work\) of 2 recordings, from their summaries/);
    expect(text.stdout).toMatch(/Clocks \(as merge aligns them\)\n {2}.*slow-rank0\.sqlite \(host vm\): reference clock/);
    expect(text.stdout).toMatch(/straggler: rank 1 \(vm, GPU 1\), last at/);
  });

  it("one rank of the job: --rank N reports the file that holds it, as that file's own report with --rank does", () => {
    const picked = run(['report', ...ranks, '--rank', '1', '--json']);
    expect(picked.code, picked.stderr).toBe(0);
    const own = run(['report', ranks[1]!, '--rank', '1', '--json']);
    expect(JSON.parse(picked.stdout)).toEqual(JSON.parse(own.stdout));
    const text = run(['report', ...ranks, '--rank', '0', '--iterations']);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^rank 0 of the job of 2 recordings: .*slow-rank0\.sqlite\nStreamScope report: .*slow-rank0\.sqlite/);
    expect(text.stdout).toMatch(/only {6}rank 0 \(pid \d+\)/);
    expect(text.stdout).toMatch(/\n {2}#3 /);
  });

  it('what a job of several recordings cannot be asked: a rank none holds, a pid, a range; a merged job to summarize', () => {
    for (const [args, why] of [
      [['--rank', '7'], /no recording of these 2 holds rank 7 \(their ranks: 0, 1\)/],
      [['--pid', '1716'], /--pid names a process of one recording \(ranks of a job may share pids\)/],
      [['--range', 'step'], /for an NVTX range, merge them \(streamscope merge\) and report the merged file/],
    ] as const) {
      const r = run(['report', ...ranks, ...args]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(why);
    }
    const merged = path.join(dir, 'job.sqlite');
    expect(run(['merge', ...ranks, '-o', merged]).code).toBe(0);
    const r = run(['summarize', merged]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/job\.sqlite: is a merged job: summarize the recordings of its ranks/);
    const missing = run(['summarize', path.join(dir, 'nowhere.sqlite')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/nowhere\.sqlite: no such file/);
  });
});
