// `streamscope diff` on the H100 recordings of one workload: default-stream
// (A) against concurrent (B) — the change a user makes after reading the
// diagnosis; and on two multi-rank jobs CONSTRUCTED per rank and merged
// (test/helpers/rank-jobs.ts): the all-reduce serialized after compute
// against started behind it.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/native.ts';
import { mergedJob } from '../helpers/rank-jobs.ts';

const cli = path.resolve(import.meta.dirname, '../../profiler/cli/streamscope.ts');
const fixture = (name: string) => path.resolve(import.meta.dirname, `../fixtures/recordings/${name}.sqlite`);
const run = (args: string[]) => spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' });

describe('streamscope diff', () => {
  it('shows the time gained, the overlap change and the default-stream finding fixed', () => {
    const r = run(['diff', fixture('normalise-default-stream'), fixture('normalise-concurrent'), '--json']);
    expect(r.status, r.stderr).toBe(0);
    const d = JSON.parse(r.stdout);
    expect(d.diffVersion).toBe(5);
    expect(d.ranks).toBeNull(); // one process each: no per-rank rows
    expect(d.gpuSpanNs.delta).toBeLessThan(0);
    expect(d.gpuSpanNs.b).toBeLessThan(d.gpuSpanNs.a);
    expect(d.devices[0].overlap.all.b).toBeGreaterThan(d.devices[0].overlap.all.a);
    expect(d.findings.find((f: { kind: string }) => f.kind === 'legacy-default-stream')).toMatchObject({ status: 'fixed' });
    expect(d.kernels[0].count).toMatchObject({ a: 8, b: 8, delta: 0 });
    expect(d.copies.map((c: { direction: string }) => c.direction).sort()).toEqual(['DtoH', 'HtoD']);
  });

  it('text: one table per part, the fixed finding marked', () => {
    const r = run(['diff', fixture('normalise-default-stream'), fixture('normalise-concurrent')]);
    expect(r.stdout).toMatch(/GPU span \(first op → last op\)\s+\S+ ms\s+\S+ ms\s+−/);
    expect(r.stdout).toMatch(/FIXED\s+legacy-default-stream/);
    // Kernels by their own name, as the timeline shows them, not mangled.
    expect(r.stdout).toMatch(/8 → 8 .* normaliseColumns\s*$/m);
    expect(r.stdout).not.toContain('_ZN6runner');
  });

  it('--fail-if-slower gates a regression with a one-line reason', () => {
    const slower = run(['diff', fixture('normalise-concurrent'), fixture('normalise-serial'), '--fail-if-slower', '5%']);
    expect(slower.status).toBe(1);
    expect(slower.stderr.trim()).toMatch(/^FAIL .*normalise-serial\.sqlite is \d+\.\d% slower than .*normalise-concurrent\.sqlite/);
    expect(run(['diff', fixture('normalise-serial'), fixture('normalise-concurrent'), '--fail-if-slower', '5%']).status).toBe(0);
    expect(run(['diff', fixture('normalise-serial'), fixture('normalise-concurrent'), '--fail-if-slower', 'lots']).status).toBe(2);
    const missing = run(['diff', '/nonexistent/a.sqlite', fixture('normalise-concurrent')]);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain('/nonexistent/a.sqlite: no such file');
  });
});

describe('streamscope diff on multi-rank jobs', () => {
  let dir: string;
  let serial: string;
  let overlapped: string;
  beforeAll(() => {
    dir = tempDir('cli-diff-ranks');
    serial = mergedJob(dir, 'serial', { ranks: 2, ranked: true, pid: (r) => 100 + r });
    overlapped = mergedJob(dir, 'overlapped', { ranks: 2, ranked: true, pid: (r) => 201 - r, overlapNs: 200_000 });
  }, 60_000);
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('--json: a row per rank paired by rank, the collectives', () => {
    const r = run(['diff', serial, overlapped, '--json']);
    expect(r.status, r.stderr).toBe(0);
    const d = JSON.parse(r.stdout);
    expect(d.ranks.map((x: { label: string; a: { pid: number }; b: { pid: number } }) => [x.label, x.a.pid, x.b.pid])).toEqual([
      ['rank 0', 100, 201],
      ['rank 1', 101, 200],
    ]);
    expect(d.ranks[0].overlap.a).toBe(0);
    expect(d.ranks[0].overlap.b).toBeGreaterThan(0.3);
    expect(d.collectives.map((c: { collective: string }) => c.collective)).toEqual(['all-reduce', 'all-gather']);
  });

  it('--fail-if-overlap-drops gates a rank whose communication is no longer hidden', () => {
    const worse = run(['diff', overlapped, serial, '--fail-if-overlap-drops', '10']);
    expect(worse.status).toBe(1);
    expect(worse.stderr.trim()).toMatch(
      /^FAIL rank \d's communication overlap fell from \d\d% to 0% in .*serial\.sqlite \(−\d+\.\d points; limit 10 points\), and 1 more rank: rank \d$/,
    );
    expect(run(['diff', serial, overlapped, '--fail-if-overlap-drops', '10']).status).toBe(0);
    // A drop within the limit passes.
    expect(run(['diff', overlapped, serial, '--fail-if-overlap-drops', '90%']).status).toBe(0);
    expect(run(['diff', serial, overlapped, '--fail-if-overlap-drops', 'some']).status).toBe(2);
    // Nothing to compare is a failure, not a pass: the gate was asked for communication.
    const none = run(['diff', fixture('normalise-serial'), fixture('normalise-concurrent'), '--fail-if-overlap-drops', '10']);
    expect(none.status).toBe(1);
    expect(none.stderr).toMatch(/^FAIL no rank has communication in both/);
  });
});

describe('streamscope report', () => {
  it('names kernels as the timeline does (the full name stays in --json)', () => {
    const text = run(['report', fixture('normalise-concurrent')]);
    expect(text.status, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^\s+8 .* normaliseColumns\s*$/m);
    expect(text.stdout).not.toContain('_ZN6runner');
    const json = JSON.parse(run(['report', fixture('normalise-concurrent'), '--json']).stdout);
    expect(json.kernels[0].name).toMatch(/^_ZN6runner.*normaliseColumns/);
  });
});
