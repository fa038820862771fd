// Every table and finding of a merged job tells its ranks apart (issue 29),
// as a user runs `merge` and `report` (child processes), on:
//  - a GENERATED two-host job (bench/generate-ranks.ts: one rank per host,
//    each rank's GPU is GPU 0 of its own host), the case;
//  - the real two-rank DDP job on two GPUs of one host (test/fixtures/ddp);
//  - the real job whose two ranks share one GPU (ddp/summarized);
//  - the real two-node torchrun, one recorder per node, whose launchers
//    initialised CUDA seconds before their ranks did (nccl-node0/1-h200x2):
//    the job's time axis starts at the job's own start;
//  - the real four-rank jobs (ddp/four-ranks): iterations per rank from the
//    user's step range, not NCCL's ranges.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateRanks } from '../../bench/generate-ranks.ts';
import { repoRoot } from '../../profiler/native/paths.ts';
import type { Report } from '../../profiler/report/report.ts';
import type { Iterations } from '../../profiler/contract/iterations.ts';
import { tempDir } from '../helpers/native.ts';

const cli = path.join(repoRoot, 'profiler/cli/streamscope.ts');
const run = (args: string[]) => {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
};
const fixtures = path.resolve(import.meta.dirname, '../fixtures');

let dir: string;
beforeAll(() => {
  dir = tempDir('report-job-ranks');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Copies of fixtures (a reader migrates an older file in place), merged; the merge's stderr. */
function merged(name: string, files: string[]): { file: string; stderr: string } {
  const copies = files.map((f) => {
    const to = path.join(dir, `${name}-${path.basename(f)}`);
    fs.copyFileSync(path.join(fixtures, f), to);
    return to;
  });
  const file = path.join(dir, `${name}.sqlite`);
  const r = run(['merge', ...copies, '-o', file]);
  expect(r.code, r.stderr).toBe(0);
  return { file, stderr: r.stderr };
}

/** The rows of a text report's section (the lines after its title up to the next blank line), without the header and rule. */
function section(text: string, title: RegExp): string[] {
  const lines = text.split('\n');
  const at = lines.findIndex((l) => title.test(l));
  expect(at, `no section ${title}`).toBeGreaterThanOrEqual(0);
  const end = lines.findIndex((l, i) => i > at && l.trim() === '');
  return lines.slice(at + 3, end < 0 ? undefined : end);
}

function report(file: string, ...args: string[]): string {
  const r = run(['report', file, ...args]);
  expect(r.code, r.stderr).toBe(0);
  return r.stdout;
}

describe('a generated job of two hosts, every rank on GPU 0 of its own host', () => {
  let file: string;
  beforeAll(() => {
    const ranks = generateRanks(path.join(dir, 'generated'), 2, 4000, 4, undefined, true);
    file = path.join(dir, 'generated.sqlite');
    const r = run(['merge', ...ranks.map((g) => g.file), '-o', file]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/merged 2 recordings \(2 processes, 2 GPUs, 8,000 GPU operations\)/);
  }, 60_000);

  it('names each GPU with its rank and host in the devices, overlap and streams tables', () => {
    const text = report(file);
    expect(section(text, /^Devices$/).map((l) => l.trim().split(/\s{2,}/)[0])).toEqual(['rank 0 (node-000, GPU 0)', 'rank 1 (node-001, GPU 0)']);
    expect(section(text, /^Overlap per device/).map((l) => l.trim().split(/\s{2,}/)[0])).toEqual(['rank 0 (node-000, GPU 0)', 'rank 1 (node-001, GPU 0)']);
    const streams = section(text, /^Streams/);
    expect(streams).toHaveLength(8);
    for (const [k, line] of streams.entries()) expect(line).toContain(k < 4 ? 'rank 0 (node-000, GPU 0)' : 'rank 1 (node-001, GPU 0)');
    // No table lists a bare "GPU 0" twice any more.
    expect(text).not.toMatch(/^\s+0\s{2,}generated GPU/m);
  }, 60_000);

  it('check names them so too', () => {
    const r = run(['check', file, '--min-overlap', '3']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/rank 0 \(node-000, GPU 0\) overlap [\d.]+ < 3; rank 1 \(node-001, GPU 0\) overlap [\d.]+ < 3/);
  }, 60_000);
});

describe('the real DDP job on two GPUs of one host (test/fixtures/ddp)', () => {
  let job: { file: string; stderr: string };
  beforeAll(() => {
    job = merged('ddp', ['ddp/ddp-rank0.sqlite', 'ddp/ddp-rank1.sqlite']);
  }, 60_000);

  it('names each GPU with its rank in the tables and in the findings', () => {
    const text = report(job.file);
    expect(section(text, /^Overlap per device/).map((l) => l.trim().split(/\s{2,}/)[0])).toEqual(['rank 0 (vm, GPU 0)', 'rank 1 (vm, GPU 1)']);
    expect(section(text, /^Devices$/).map((l) => l.trim().split(/\s{2,}/)[0])).toEqual(['rank 0 (vm, GPU 0)', 'rank 1 (vm, GPU 1)']);
    const idle = text.split('\n').filter((l) => / idle in \d+ gaps? /.test(l));
    expect(idle.length).toBe(2);
    for (const l of idle) expect(l).toMatch(/ rank [01] \(vm, GPU [01]\) idle in /);
    expect(text).not.toMatch(/ GPU \d idle in /);
  }, 60_000);

  it("--iterations: the user's step range, each rank's steps numbered from 1, rank by rank", () => {
    const r = run(['report', job.file, '--iterations', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const it = (JSON.parse(r.stdout) as { iterations: Iterations }).iterations;
    expect(it.name).toBe('train_step');
    expect(it.processes).toBe(2);
    for (const rank of [0, 1]) {
      const own = it.rows.filter((x) => x.rank === rank);
      expect(own.map((x) => x.step)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      expect(new Set(own.map((x) => x.pid)).size).toBe(1);
      expect(new Set(own.flatMap((x) => x.devices.map((d) => d.gpu)))).toEqual(new Set([rank]));
    }
    const text = report(job.file, '--iterations');
    expect(text).toMatch(/Iterations of NVTX range 'train_step' \(the repeating range covering most time\): 20 instances, 10 on each of 2 ranks, median /);
    const rows = section(text, /^Iterations of NVTX range/);
    expect(rows.map((l) => l.trim().split(/\s+/).slice(0, 3).join(' '))).toEqual([
      ...Array.from({ length: 10 }, (_, k) => `0 ${rows[0]!.trim().split(/\s+/)[1]} #${k + 1}`),
      ...Array.from({ length: 10 }, (_, k) => `1 ${rows[10]!.trim().split(/\s+/)[1]} #${k + 1}`),
    ]);
  }, 60_000);
});

describe('the real job whose two ranks share one GPU (ddp/summarized)', () => {
  it('merge counts 1 GPU; the GPU is named with both ranks, each stream with its own', () => {
    const job = merged('shared', ['ddp/summarized/run-vm-0.sqlite', 'ddp/summarized/run-vm-1.sqlite']);
    expect(job.stderr).toMatch(/merged 2 recordings \(2 processes, 1 GPU, 1,112 GPU operations\)/);
    const text = report(job.file);
    expect(section(text, /^Overlap per device/).map((l) => l.trim().split(/\s{2,}/)[0])).toEqual(['ranks 0, 1 (vm, GPU 0)']);
    const streams = section(text, /^Streams/);
    expect(streams.some((l) => l.includes('rank 0 (vm, GPU 0)'))).toBe(true);
    expect(streams.some((l) => l.includes('rank 1 (vm, GPU 0)'))).toBe(true);
  }, 60_000);
});

describe('two nodes recorded apart, their launchers initialising CUDA before their ranks (nccl-node0/1-h200x2)', () => {
  let job: { file: string; stderr: string };
  beforeAll(() => {
    job = merged('nodes', ['recordings/nccl-node0-h200x2.sqlite', 'recordings/nccl-node1-h200x2.sqlite']);
  }, 60_000);

  it("the job's times start at its own start: nothing before 0, start-up ending after its own length", () => {
    const db = new Database(job.file, { readonly: true });
    try {
      // The inputs' launchers' calls start 3.7 s and 3.4 s before their recordings' origins.
      expect(db.prepare('SELECT min(start_ns) FROM zones').pluck().get()).toBe(0);
      expect(db.prepare('SELECT min(start_ns) FROM api_calls').pluck().get()).toBe(0);
    } finally {
      db.close();
    }
    const r = run(['report', job.file, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const startup = (JSON.parse(r.stdout) as Report).scope.startup!;
    expect(startup.startNs).toBe(0);
    expect(startup.endNs).toBeGreaterThan(4e9);
    // As the report says it: "start-up 4.48 s, until 4.48 s" (it read "4.48 s, until 1.05 s").
    const line = report(job.file)
      .split('\n')
      .find((l) => l.startsWith('start-up'))!;
    const [length, until] = [...line.matchAll(/(\d+\.\d+) s/g)].map((m) => Number(m[1]));
    expect(until).toBeGreaterThanOrEqual(length!);
  }, 60_000);

  it("reported from the files' summaries, without merging: the same start, the same shifts", () => {
    const copies = ['nccl-node0-h200x2', 'nccl-node1-h200x2'].map((n) => {
      const to = path.join(dir, `apart-${n}.sqlite`);
      fs.copyFileSync(path.join(fixtures, 'recordings', `${n}.sqlite`), to);
      return to;
    });
    const r = run(['report', ...copies]);
    expect(r.code, r.stderr).toBe(0);
    const startup = (text: string) => /^start-up {2}(\d+\.\d+ s), until (\d+\.\d+ s)/m.exec(text)!.slice(1);
    expect(startup(r.stdout)).toEqual(startup(report(job.file)));
    expect(startup(r.stdout)).toEqual(['4.48 s', '4.48 s']);
    expect(r.stdout).toMatch(/nccl-node0-h200x2\.sqlite \(host vm\): reference clock; .* times shifted \+3\.70 s/);
    expect(r.stdout).toMatch(/nccl-node1-h200x2\.sqlite \(host vm\): clock corrected .* times shifted \+3\.43 s/);
  }, 60_000);

  it('merge still aligns the ranks by their collectives (only the origin moved)', () => {
    expect(job.stderr).toMatch(/reference clock; residual [\d.]+ µs median/);
    expect(job.stderr).toMatch(/times shifted \+3\.70 s/);
    expect(job.stderr).toMatch(/times shifted \+3\.43 s/);
  });
});

describe("the real four-rank jobs: iterations from the user's step range, not NCCL's", () => {
  for (const shape of ['serial', 'ddp']) {
    it(`${shape}: 'train_step', 6 on each of 4 ranks (NCCL's ncclAllReduce or ncclAllGather covers more time)`, () => {
      const job = merged(
        `four-${shape}`,
        [0, 1, 2, 3].map((k) => `ddp/four-ranks/${shape}-rank${k}.sqlite`),
      );
      const r = run(['report', job.file, '--iterations', '--no-job', '--json']);
      expect(r.code, r.stderr).toBe(0);
      const it = (JSON.parse(r.stdout) as { iterations: Iterations }).iterations;
      expect(it.name).toBe('train_step');
      expect(it.chosen).toBe('picked');
      expect(it.processes).toBe(4);
      for (const rank of [0, 1, 2, 3]) expect(it.rows.filter((x) => x.rank === rank).map((x) => x.step)).toEqual([1, 2, 3, 4, 5, 6]);
    }, 90_000);
  }
});

describe('one process, as before', () => {
  it('names its GPU by its ordinal alone', () => {
    const file = path.join(dir, 'one.sqlite');
    fs.copyFileSync(path.join(fixtures, 'recordings/normalise-concurrent.sqlite'), file);
    const text = report(file);
    expect(section(text, /^Overlap per device/).map((l) => l.trim().split(/\s+/)[0])).toEqual(['0']);
    expect(text).not.toMatch(/rank \d/);
  }, 60_000);
});
