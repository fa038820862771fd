// The cross-rank analysis of a job read rank by rank (profiler/analysis/diagnosis/job.ts)
// against the whole recording's analysis (analyze()): the same scope and
// start-up, the same per-rank communication breakdown, the same stragglers,
// the same serialized-collective and straggler-rank findings — equal, not
// close — on real recordings:
//
//  - the two-rank torchrun jobs recorded on two H200s by one recorder
//    (nccl-serial-h200x2: both ranks' all-reduces serialized behind the
//    backward pass; nccl-straggler-h200x2: rank 1 sleeps before each step
//    and is the straggler), read process by process (not merged: each
//    process's rows by its zones), in every scope;
//  - the same program as a 2-node job recorded apart and merged by the real
//    merge (nccl-node0/1-h200x2), read source by source;
//  - a generated job of 12 ranks (bench/generate-ranks.ts, merged), which
//    `report` reads rank by rank on its own (more than 8 ranks): its JSON
//    against `report --no-job --json`'s.
//
// Start-up from the zones (job-scope.ts) against detectStartup on every
// fixture, the band of rows read exactly or not; zones that disagree with
// their rows make `report` analyse the file whole; `report --rank N` and
// `--pid P` report one rank from its own rows.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateRanks } from '../../bench/generate-ranks.ts';
import { serializedCollectives } from '../../profiler/analysis/diagnosis/findings/serialized-collective.ts';
import { analyzeJob, loadProcessColumns, planJob, ZonesDisagree, type JobAnalysis } from '../../profiler/analysis/diagnosis/job.ts';
import { jobStartup } from '../../profiler/analysis/job-scope.ts';
import { analyze, type Analysis } from '../../profiler/analysis/diagnosis/analyze.ts';
import { workProgress } from '../../profiler/analysis/startup.ts';
import { readTraceTables } from '../../profiler/analysis/load/tables.ts';
import type { Finding } from '../../profiler/contract/findings.ts';
import type { Scope } from '../../profiler/contract/scope.ts';
import { mergeRecordings } from '../../profiler/merge/merge.ts';
import { loadTimelineColumns } from '../../profiler/native/addon.ts';
import { repoRoot } from '../../profiler/native/paths.ts';
import { openRecording } from '../../profiler/store/database.ts';
import { tempDir } from '../helpers/native.ts';

const fixtures = path.resolve(import.meta.dirname, '../fixtures/recordings');
const fixture = (name: string) => path.join(fixtures, `${name}.sqlite`);
const cli = path.join(repoRoot, 'profiler/cli/streamscope.ts');
const report = (...args: string[]) => spawnSync(process.execPath, [cli, 'report', ...args], { encoding: 'utf8' });

let dir: string;
beforeAll(() => {
  dir = tempDir('job');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const SCOPES: Scope[] = [{ kind: 'steady-state' }, { kind: 'whole' }, { kind: 'range', name: 'step' }, { kind: 'window', startNs: 4.2e9, endNs: 4.4e9 }];

const byProcess = (fs: Finding[]) => [...fs].sort((a, b) => (a.pid ?? 0) - (b.pid ?? 0) || (a.deviceId ?? 0) - (b.deviceId ?? 0));

/** Everything the job analysis gives, equal to the whole analysis's. */
function expectSame(job: JobAnalysis, whole: Analysis): void {
  expect(job.scope).toEqual(whole.scope);
  expect(job.gpuSpan).toEqual(whole.diagnosis.context.gpuSpan);
  expect(job.communication).toEqual(whole.communication);
  expect(job.stragglers).toEqual(whole.stragglers);
  // The serialized-collective rule's findings (their cost the rule's own: the whole diagnosis replaces it by its what-if).
  expect(byProcess(job.findings.filter((f) => f.kind === 'serialized-collective'))).toEqual(byProcess(serializedCollectives(whole.diagnosis.context)));
  expect(job.findings.filter((f) => f.kind === 'straggler-rank')).toEqual(whole.diagnosis.findings.filter((f) => f.kind === 'straggler-rank'));
  // Nothing else: the findings of one rank are its own report's.
  expect(job.findings.every((f) => f.kind === 'serialized-collective' || f.kind === 'straggler-rank')).toBe(true);
}

describe('a job read rank by rank: the whole analysis, part by part', () => {
  for (const name of ['nccl-serial-h200x2', 'nccl-straggler-h200x2']) {
    for (const scope of SCOPES) {
      it(`${name}, ${scope.kind}: the same as analyze(), on two worker threads and on this one`, async () => {
        const db = openRecording(fixture(name), { readonly: true });
        try {
          const whole = analyze(db, { scope });
          for (const workers of [2, 0]) {
            const job = await analyzeJob(db, { scope, workers });
            expectSame(job, whole);
            expect(job).toMatchObject({ merged: false, ranks: 2, workers: Math.min(workers, 3) });
            // Three processes (torchrun's launcher has no GPU work), each its own part; the ranks' calls were read (NCCL's ranges,
            // their waits), and for a range every part's (which calls started inside it).
            expect(job.parts).toBe(3);
            expect(job.partsWithCalls).toBe(scope.kind === 'range' ? 3 : 2);
          }
        } finally {
          db.close();
        }
      });
    }
  }

  it('says what the recordings hold: both ranks serialized; rank 1 the straggler', async () => {
    const serial = openRecording(fixture('nccl-serial-h200x2'), { readonly: true });
    const straggler = openRecording(fixture('nccl-straggler-h200x2'), { readonly: true });
    try {
      const s = await analyzeJob(serial);
      expect(s.scope.kind).toBe('steady-state');
      expect(s.scope.startup).not.toBeNull();
      expect(byProcess(s.findings).map((f) => [f.kind, f.pid])).toEqual([
        ['serialized-collective', 703],
        ['serialized-collective', 704],
        ['straggler-rank', 704],
      ]);
      // Rank 1 last at 70 of 81 all-reduces, 10 µs late on average: named (it causes most of the waiting), at the severity
      // its 0.7 ms cost has beside the serialized collectives' errors.
      expect(s.findings.find((f) => f.kind === 'straggler-rank')!.severity).toBe('info');
      expect(s.communication.ranks.map((r) => r.rank)).toEqual([0, 1]);
      const t = await analyzeJob(straggler);
      expect(t.stragglers.straggler).toMatchObject({ pid: 883, rank: 1 });
      expect(t.findings.find((f) => f.kind === 'straggler-rank')).toMatchObject({ pid: 883 });
    } finally {
      serial.close();
      straggler.close();
    }
  });

  it('a job recorded node by node and merged (nccl-node0/1-h200x2): read source by source, the same', async () => {
    const out = path.join(dir, 'two-nodes.sqlite');
    mergeRecordings([fixture('nccl-node0-h200x2'), fixture('nccl-node1-h200x2')], out);
    const db = openRecording(out, { readonly: true });
    try {
      for (const scope of SCOPES.slice(0, 3)) {
        const job = await analyzeJob(db, { scope });
        expectSame(job, analyze(db, { scope }));
        // Two sources, each a node's recorder with its torchrun launcher and one rank.
        expect(job).toMatchObject({ merged: true, parts: 2, ranks: 2 });
      }
      expect(planJob(db).parts.map((p) => p.pids.length)).toEqual([2, 2]);
    } finally {
      db.close();
    }
  });

  it("one process's columns (report --rank N) are exactly its rows of the whole recording's", () => {
    for (const file of [fixture('nccl-straggler-h200x2'), path.join(dir, 'two-nodes.sqlite')]) {
      const db = openRecording(file, { readonly: true });
      try {
        const all = loadTimelineColumns(file);
        for (const part of planJob(db).parts) {
          for (const pid of part.pids) {
            const mine = loadProcessColumns(db, [pid]);
            const ids = (c: { length: number; rowId: Float64Array; pid: Int32Array; start: Float64Array }, only: boolean) =>
              Array.from({ length: c.length }, (_, i) => i)
                .filter((i) => !only || c.pid[i] === pid)
                .map((i) => `${c.start[i]}:${c.rowId[i]}`);
            expect(ids(mine.ops, false)).toEqual(ids(all.ops, true));
            expect(ids(mine.calls, false)).toEqual(ids(all.calls, true));
          }
        }
      } finally {
        db.close();
      }
    }
  });
});

describe('start-up from the zones (job-scope.ts)', () => {
  const names = fs
    .readdirSync(fixtures)
    .filter((f) => f.endsWith('.sqlite'))
    .map((f) => f.replace(/\.sqlite$/, ''));

  it('is where detectStartup finds it on every fixture, the band read or not', () => {
    let withStartup = 0;
    for (const name of names) {
      const db = openRecording(fixture(name), { readonly: true });
      try {
        const { meta, strings } = readTraceTables(db);
        const expected = analyze(db, { scope: { kind: 'whole' } }).scope.startup;
        for (const exact of [false, true]) {
          const found = jobStartup(db, db.name, meta, strings, { exact });
          expect(found.startup, `${name}${exact ? ' (band read)' : ''}`).toEqual(expected ? { ...expected, ops: 0 } : null);
          // Where a tenth of the work is done, from the zones and the band's rows: as from every operation.
          if (exact) expect(found.limitStart, name).toBe(workProgress(loadTimelineColumns(db.name).ops).limitStart);
        }
        if (expected) withStartup++;
      } finally {
        db.close();
      }
    }
    expect(withStartup).toBeGreaterThan(20);
  });

  it('zones that disagree with their rows: analyzeJob refuses, and report analyses the file whole', async () => {
    const file = path.join(dir, 'bad-zones.sqlite');
    fs.copyFileSync(fixture('nccl-straggler-h200x2'), file);
    const w = new Database(file);
    w.prepare('UPDATE zones SET busy_ns = busy_ns + 1 WHERE table_id = 1 AND first_id = (SELECT min(first_id) FROM zones WHERE table_id = 1)').run();
    w.close();
    const db = openRecording(file, { readonly: true });
    try {
      await expect(analyzeJob(db)).rejects.toThrow(ZonesDisagree);
    } finally {
      db.close();
    }
    const r = report(file, '--job', '--json');
    expect(r.status).toBe(0);
    expect(r.stderr).toContain('is analysed whole, not rank by rank: the zones count');
    expect(JSON.parse(r.stdout)).toMatchObject({ reportVersion: 9, job: null, only: null });
  });
});

describe('streamscope report of a job', () => {
  let job: string;
  beforeAll(() => {
    // 12 generated ranks (one host and GPU each, clocks apart, merged as a user would): more than 8, so report reads them rank by rank.
    const ranks = generateRanks(path.join(dir, 'ranks'), 12, 20_000, 4);
    job = path.join(dir, 'job12.sqlite');
    mergeRecordings(
      ranks.map((r) => r.file),
      job,
    );
  });

  it("of more than 8 ranks reads them rank by rank: the whole report's communication and stragglers, in JSON and text", () => {
    const json = report(job, '--json');
    expect(json.status).toBe(0);
    const j = JSON.parse(json.stdout);
    expect(j).toMatchObject({ reportVersion: 9, job: { ranks: 12, parts: 12, readBy: 'source', partsWithCalls: 0, findingsCost: 'rule' }, only: null });
    expect(j).not.toHaveProperty('overlap');
    const whole = JSON.parse(report(job, '--json', '--no-job').stdout);
    expect(whole).toMatchObject({ reportVersion: 9, job: null });
    for (const key of ['recording', 'scope', 'processes', 'devices', 'communication', 'stragglers']) expect(j[key], key).toEqual(whole[key]);
    expect(j.communication.ranks).toHaveLength(12);
    expect(j.stragglers.instances).toBeGreaterThan(100);

    const text = report(job);
    expect(text.status).toBe(0);
    expect(text.stdout).toMatch(/^job {7}12 ranks \(processes with GPU work\) read source by source, 12 parts on \d worker threads?, in \S+ s/m);
    expect(text.stdout).toContain(`streamscope report ${job} --pid P`);
    expect(text.stdout).toContain('Communication (NCCL kernels and peer copies), per rank and GPU');
    expect(text.stdout).toContain('Stragglers (NCCL collectives matched across 12 ranks');
    expect(text.stdout).not.toContain('Overlap per device');
  });

  it('--rank N and --pid P report one rank whole, from its own rows', () => {
    const r = report(fixture('nccl-straggler-h200x2'), '--rank', '1', '--json');
    expect(r.status).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j.only).toEqual({ pids: [883], label: 'rank 1 (pid 883)' });
    expect(j.processes.map((p: { pid: number }) => p.pid)).toEqual([883]);
    expect(j.communication.ranks.map((x: { pid: number }) => x.pid)).toEqual([883]);
    expect(j.devices).toHaveLength(1);
    expect(j).toHaveProperty('overlap');
    expect(JSON.parse(report(fixture('nccl-straggler-h200x2'), '--pid', '883', '--json').stdout).only).toEqual(j.only);
    const text = report(fixture('nccl-straggler-h200x2'), '--rank', '1');
    expect(text.stdout).toMatch(/^only {6}rank 1 \(pid 883\): its own rows/m);

    const none = report(fixture('nccl-straggler-h200x2'), '--rank', '7');
    expect(none.status).toBe(2);
    expect(none.stderr).toContain('has no rank 7 (its ranks: 0, 1)');
    const pid = report(job, '--pid', '1', '--json');
    expect(pid.status).toBe(0);
    expect(JSON.parse(pid.stdout).only).toEqual({ pids: [1], label: 'pid 1' });
    expect(report(job, '--rank', '0').stderr).toContain('no process has a rank: name one with --pid');
  });

  it('--job reads any recording so; --iterations needs a rank', () => {
    const r = report(fixture('nccl-serial-h200x2'), '--job');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^job {7}2 ranks \(processes with GPU work\) read process by process, 3 parts/m);
    expect(r.stdout).toMatch(/^\s+ERROR\s+71.4 ms {2}Rank 0 \(pid 703\): 80 all-reduces on GPU 0 waited for all the computation before them/m);
    expect(r.stdout).toContain('--rank N');
    const it = report(job, '--iterations');
    expect(it.status).toBe(2);
    expect(it.stderr).toContain('--iterations reads every rank');
  });
});
