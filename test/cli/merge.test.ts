// `streamscope merge` as a user runs it (a child process): what it prints
// per input, --json, --force, --align, and the exit codes of bad usage and
// bad inputs (2, nothing written). The clock alignment itself is tested in
// test/merge/align.test.ts; here on per-rank recordings constructed for the
// arithmetic (test/helpers/rank-recordings.ts), two hosts 3.7 ms apart.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../profiler/native/paths.ts';
import { tempDir } from '../helpers/native.ts';
import { writeRankRecording } from '../helpers/rank-recordings.ts';

const cli = path.join(repoRoot, 'profiler/cli/streamscope.ts');
const run = (args: string[]) => {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
};
const fixtures = path.resolve(import.meta.dirname, '../fixtures/recordings');

let dir: string;
let ranks: string[];
beforeAll(() => {
  dir = tempDir('cli-merge');
  const job = 1_795_000_000_000_000_000n;
  ranks = [0, 1].map((rank) => {
    const file = path.join(dir, `rank${rank}.sqlite`);
    writeRankRecording(
      { file, host: `node${rank}`, rank, clockOffsetNs: rank ? 3_700_000 : 0, originNs: job + BigInt(rank * 200_000), steps: 40, jitterNs: 2000 },
      job,
    );
    return file;
  });
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('streamscope merge', () => {
  it('merges, and prints per input the correction, the residual and the shift', () => {
    const out = path.join(dir, 'job.sqlite');
    const r = run(['merge', ...ranks, '-o', out]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^streamscope: merged 2 recordings \(2 processes, 2 GPUs, 320 GPU operations\) → .*job\.sqlite in [\d.]+ s$/m);
    expect(r.stderr).toMatch(
      /rank0\.sqlite \(host node0\): reference clock; residual [\d.]+ [nµ]s median, [\d.]+ [nµ]s max over 40 collectives; times shifted \+0 ns/,
    );
    expect(r.stderr).toMatch(
      /rank1\.sqlite \(host node1\): clock corrected −3\.70 ms \(−3,(69\d|70\d),\d\d\d ns\) by its NCCL collectives; residual [\d.]+ [nµ]s median/,
    );
    expect(r.stderr).toContain('is pid 4194303 here');
    expect(fs.existsSync(out)).toBe(true);
    // Then report reads it like any recording.
    const report = run(['report', out, '--json']);
    expect(report.code, report.stderr).toBe(0);
    expect((JSON.parse(report.stdout) as { devices: unknown[] }).devices).toHaveLength(2);
  });

  it('--json on stdout: the result per input; --force to overwrite; --align wall-clock', () => {
    const out = path.join(dir, 'job-json.sqlite');
    fs.writeFileSync(out, 'old');
    expect(run(['merge', ...ranks, '-o', out]).code).toBe(2);
    const r = run(['merge', ...ranks, '-o', out, '--force', '--json', '--align', 'wall-clock']);
    expect(r.code, r.stderr).toBe(0);
    const json = JSON.parse(r.stdout) as { mergeVersion: number; output: string; sources: { clock: string; correctionNs: number; shiftNs: number }[] };
    expect(json.mergeVersion).toBe(1);
    expect(json.output).toBe(path.resolve(out));
    expect(json.sources.map((s) => [s.clock, s.correctionNs])).toEqual([
      ['reference', 0],
      ['wall-clock', 0],
    ]);
    // Recorded times alone: rank 1's origin is 0.2 ms later by true time and its clock 3.7 ms ahead.
    expect(json.sources[1]!.shiftNs).toBe(3_900_000);
    expect(r.stderr).toContain('no NCCL collective matched another recording');
  });

  it('bad usage and bad inputs exit 2, naming the problem, and write nothing', () => {
    expect(run(['merge', ...ranks]).stderr).toContain('usage: streamscope merge');
    expect(run(['merge', ...ranks]).code).toBe(2);
    expect(run(['merge', ...ranks, '-o', path.join(dir, 'x.sqlite'), '--align', 'sundial'])).toMatchObject({
      code: 2,
      stderr: "streamscope merge: --align: expected collectives or wall-clock, got 'sundial'\nsee streamscope merge --help\n",
    });
    const text = path.join(dir, 'readme.sqlite');
    fs.writeFileSync(text, 'not a recording\n'.repeat(200));
    const out = path.join(dir, 'never.sqlite');
    const r = run(['merge', ranks[0]!, text, '-o', out]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`streamscope: ${text}: not a SQLite database (not a StreamScope recording)\n`);
    const twice = run(['merge', ranks[0]!, ranks[0]!, '-o', out]);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain('rank0.sqlite: given twice');
    const missing = run(['merge', ranks[0]!, path.join(fixtures, 'no-such.sqlite'), '-o', out]);
    expect(missing.stderr).toContain('no-such.sqlite: no such file');
    expect(fs.readdirSync(dir).filter((f) => f.includes('never'))).toEqual([]);
  });
});
