// `npm run test:gpu`, part two: Python programs as users write them. NVTX
// ranges from each Python library arrive (per thread, with domains); three
// programs written with a known cause of serialization are diagnosed in
// their steady state, start-up summarised in one line; the what-if for
// removing registration calls is checked against the fixed program; a
// capture range keeps only the work inside it. Skipped without a GPU.
//
// STREAMSCOPE_FIXTURE_DIR=dir keeps the recordings (fixtures with
// provenance); STREAMSCOPE_GPU_RESULTS is written by scenarios.test.ts, this
// file prints its own table.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { analyze, type Analysis } from '../../profiler/analysis/diagnosis/analyze.ts';
import type { Scope } from '../../profiler/contract/scope.ts';
import { devices } from '../../profiler/native/addon.ts';
import { repoRoot } from '../../profiler/native/paths.ts';
import { record } from '../../profiler/record/recorder.ts';
import { openRecording } from '../../profiler/store/database.ts';

const inventory = devices();
const skip = inventory.devices.length === 0 ? `no GPU here: ${inventory.error ?? 'no CUDA devices'}` : false;
if (skip) console.log(`# GPU tests (Python) skipped: ${skip}`);

const keepDir = process.env.STREAMSCOPE_FIXTURE_DIR;
const workDir = keepDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'ss-gpu-py-'));
fs.mkdirSync(workDir, { recursive: true });
const table: Record<string, unknown>[] = [];
after(() => {
  if (table.length)
    console.log(
      '\n' +
        table
          .map((r) =>
            Object.entries(r)
              .map(([k, v]) => `${k}=${typeof v === 'number' ? +v.toFixed(3) : v}`)
              .join(' '),
          )
          .join('\n'),
    );
  if (!keepDir) fs.rmSync(workDir, { recursive: true, force: true });
});

const cli = path.join(repoRoot, 'profiler/cli/streamscope.ts');
const script = (name: string) => path.join(repoRoot, 'test/gpu/scripts', name);

async function recordPython(name: string, argv: string[]): Promise<{ file: string; stdout: string }> {
  const file = path.join(workDir, `${name}.sqlite`);
  const r = await record({ output: file, overwrite: true, argv: ['python3', ...argv], stdio: 'pipe' });
  assert.equal(r.exitCode, 0, `${argv.join(' ')}: ${r.stderr}${r.stdout}`);
  assert.ok(r.complete, `incomplete: ${r.incompleteReason}`);
  return { file, stdout: r.stdout };
}

function analysed(file: string, scope?: Scope): Analysis {
  const db = openRecording(file, { readonly: true });
  try {
    return analyze(db, { scope });
  } finally {
    db.close();
  }
}

function rows<T>(file: string, sql: string, ...params: unknown[]): T[] {
  const db = openRecording(file, { readonly: true });
  try {
    return db.prepare(sql).all(...params) as T[];
  } finally {
    db.close();
  }
}

/** The text report: exactly one start-up line, no mangled C++ name. */
function checkReportText(file: string): string {
  const text = execFileSync(process.execPath, [cli, 'report', file], { encoding: 'utf8' });
  assert.equal(text.split('\n').filter((l) => l.startsWith('start-up ')).length, 1, 'start-up is one line');
  assert.doesNotMatch(text, /\b_Z[A-Z0-9]/, 'no mangled name in the text report');
  return text;
}

interface Expected {
  threads: { main: number; worker: number | null };
  expect: { name: string; domain: string | null; thread: 'main' | 'worker'; count: number; mark: boolean }[];
  expect_prefix: { prefix: string; thread: 'main' | 'worker'; at_least: number }[];
  cupti: string[];
}

describe('NVTX ranges from every Python library arrive, per thread, with domains', { skip }, () => {
  const hasNvtx = spawnSync('python3', ['-c', 'import nvtx'], { stdio: 'ignore' }).status === 0;
  for (const library of ['torch', 'torch-emit', 'cupy', 'nvtx']) {
    const libSkip = library === 'nvtx' && !hasNvtx ? 'the `nvtx` Python package is not installed here (pip install nvtx)' : false;
    it(library, { skip: libSkip }, async () => {
      const { file, stdout } = await recordPython(`nvtx_${library}`, [script('nvtx_ranges.py'), library]);
      const expected = JSON.parse(stdout.trim().split('\n').at(-1)!) as Expected;
      const got = rows<{ name: string; domain: string | null; tid: number; n: number; marks: number }>(
        file,
        `SELECT s.value AS name, d.value AS domain, r.tid, count(*) AS n, sum(r.end_ns IS NULL) AS marks
         FROM nvtx_ranges r JOIN strings s ON s.id = r.name_id LEFT JOIN strings d ON d.id = r.domain_id GROUP BY 1, 2, 3`,
      );
      for (const e of expected.expect) {
        const tid = expected.threads[e.thread];
        const g = got.find((x) => x.name === e.name && x.tid === tid && (x.domain ?? null) === e.domain);
        assert.ok(g, `${library}: '${e.name}' (domain ${e.domain ?? 'default'}) on the ${e.thread} thread: missing; got ${JSON.stringify(got)}`);
        assert.equal(g.n, e.count, `${library}: '${e.name}' count`);
        assert.equal(g.marks, e.mark ? e.count : 0, `${library}: '${e.name}' is ${e.mark ? 'a mark' : 'a range'}`);
      }
      for (const p of expected.expect_prefix) {
        const n = got.filter((x) => x.name.startsWith(p.prefix) && x.tid === expected.threads[p.thread]).reduce((t, x) => t + x.n, 0);
        assert.ok(n >= p.at_least, `${library}: ranges named ${p.prefix}…: ${n} < ${p.at_least}`);
      }
      table.push({ nvtx: library, ranges: got.reduce((t, x) => t + x.n, 0), libcupti_copies: expected.cupti.length });
    });
  }
});

describe('Python programs: the steady-state diagnosis names the cause each was written with', { skip }, () => {
  it('numba, cuda.pinned(...) inside the loop: registration calls lead; the what-if matches the program pinned once', async () => {
    const inside = await recordPython('numba_pinned_loop', [script('numba_pinned_loop.py'), '--pin', 'inside']);
    const once = await recordPython('numba_pinned_loop-once', [script('numba_pinned_loop.py'), '--pin', 'once']);
    const a = analysed(inside.file);
    const first = a.diagnosis.findings[0]!;
    assert.equal(first.kind, 'host-blocking-call');
    assert.match(first.title, /cuMemHost(Register|Unregister)/);
    assert.match(first.fix, /pin/i);
    const measured = analysed(once.file).diagnosis.context.gpuSpan;
    const measuredNs = measured.end - measured.start;
    const whatIf = a.diagnosis.findings.find((f) => f.fixId === 'hoist-register')?.whatIf;
    assert.ok(whatIf, 'a what-if prediction for removing the registration calls');
    const error = (whatIf.predictedNs - measuredNs) / measuredNs;
    table.push({
      program: 'numba_pinned_loop',
      first: first.kind,
      predictedMs: whatIf.predictedNs / 1e6,
      measuredOnceMs: measuredNs / 1e6,
      errorPct: error * 100,
    });
    assert.ok(Math.abs(error) <= 0.15, `predicted ${whatIf.predictedNs} ns vs measured ${measuredNs} ns (${(error * 100).toFixed(1)}%)`);
    checkReportText(inside.file);
  });

  it('cupy, streams and events, kernels on the legacy default stream: that leads; the iterations are NVTX ranges', async () => {
    const { file } = await recordPython('cupy_streams_events', [script('cupy_streams_events.py')]);
    await recordPython('cupy_streams_events-own', [script('cupy_streams_events.py'), '--kernel-stream', 'own']);
    const a = analysed(file);
    assert.equal(a.diagnosis.findings[0]!.kind, 'legacy-default-stream', a.diagnosis.findings.map((f) => f.kind).join(' '));
    const it4 = rows<{ n: number }>(file, "SELECT count(*) AS n FROM nvtx_ranges r JOIN strings s ON s.id = r.name_id WHERE s.value = 'iteration'")[0]!.n;
    assert.equal(it4, 4);
    checkReportText(file);
    table.push({ program: 'cupy_streams_events', first: a.diagnosis.findings[0]!.kind, costMs: a.diagnosis.findings[0]!.costNs / 1e6 });
  });

  it('pytorch, prefetch on a side stream from pageable batches: pageable copies lead; the steps are NVTX ranges', async () => {
    const { file } = await recordPython('torch_prefetch', [script('torch_prefetch.py')]);
    await recordPython('torch_prefetch-pinned', [script('torch_prefetch.py'), '--batches', 'pinned']);
    const a = analysed(file);
    assert.equal(a.diagnosis.findings[0]!.kind, 'pageable-async-copy', a.diagnosis.findings.map((f) => f.kind).join(' '));
    const named = rows<{ name: string; n: number }>(
      file,
      'SELECT s.value AS name, count(*) AS n FROM nvtx_ranges r JOIN strings s ON s.id = r.name_id GROUP BY 1',
    );
    assert.deepEqual(Object.fromEntries(named.map((x) => [x.name, x.n])), { step: 12, prefetch: 12, compute: 12 });
    const step = analysed(file, { kind: 'range', name: 'step' });
    assert.ok(step.trace.ops.length > 0);
    checkReportText(file);
    table.push({ program: 'torch_prefetch', first: a.diagnosis.findings[0]!.kind, stepOps: step.trace.ops.length });
  });

  it("torch.profiler inside the recorded program: record says in one note that the target's profiler got nothing, and why", async () => {
    const r = await record({
      output: path.join(workDir, 'torch_profiler_inside.sqlite'),
      overwrite: true,
      argv: ['python3', script('torch_streams.py'), '--torch-profiler', path.join(workDir, 'inside.json')],
      stdio: 'pipe',
    });
    assert.equal(r.exitCode, 0, r.stderr);
    assert.ok(r.complete, `incomplete: ${r.incompleteReason}`);
    const notes = r.notes.filter((n) => /CUPTI client of the target's own/.test(n));
    assert.equal(notes.length, 1, `notes: ${r.notes.join(' | ')}`);
    assert.match(notes[0]!, /recorded no GPU activity/);
    // The target's own profiler saw nothing; the recording has the work.
    assert.match(r.stdout, /"kernels": 0/);
    assert.ok(rows<{ n: number }>(r.output, 'SELECT count(*) AS n FROM kernels')[0]!.n > 0);
  });

  it('record --capture-range nvtx:step keeps only the work launched inside the steps', async () => {
    const file = path.join(os.tmpdir(), `ss-capture-${process.pid}.sqlite`);
    try {
      const r = spawnSync(
        process.execPath,
        [cli, 'record', '-f', '-q', '-o', file, '--capture-range', 'nvtx:step', '--', 'python3', script('torch_prefetch.py')],
        { encoding: 'utf8' },
      );
      assert.equal(r.status, 0, r.stderr);
      const whole = analysed(file, { kind: 'whole' });
      const inside = analysed(file, { kind: 'range', name: 'step' });
      assert.ok(whole.trace.ops.length > 0);
      assert.equal(whole.trace.ops.length, inside.trace.ops.length, 'nothing outside the steps was kept');
      table.push({ program: 'torch_prefetch --capture-range nvtx:step', ops: whole.trace.ops.length });
    } finally {
      fs.rmSync(file, { force: true });
    }
  });
});
