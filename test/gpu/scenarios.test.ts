// `npm run test:gpu`: records every workload × scenario of the bundled runner
// and the Python scripts on a real GPU, and checks what the recording says
// against what each scenario is known to do. Runs with Node's own test
// runner so that the GPU machine needs nothing but Node and the native build.
// Without a GPU every test is skipped with the reason.
//
// STREAMSCOPE_FIXTURE_DIR=dir keeps the recordings there (fixtures with
// provenance); STREAMSCOPE_GPU_RESULTS=file writes the results table as JSON.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { analyze } from '../../profiler/analysis/diagnosis/analyze.ts';
import { overlapByDevice } from '../../profiler/analysis/overlap.ts';
import { loadTrace, type Trace } from '../../profiler/analysis/trace.ts';
import { devices } from '../../profiler/native/addon.ts';
import { repoRoot } from '../../profiler/native/paths.ts';
import { record } from '../../profiler/record/recorder.ts';
import { workloadArgv } from '../../profiler/record/workload.ts';
import { openRecording, readMeta } from '../../profiler/store/database.ts';
import { StreamFlags } from '../../profiler/store/enums.ts';
import { zonesWrittenAndRecomputed } from '../helpers/zones.ts';
import { count, expectScenario, isCopy, isKernel, queryCount, SCENARIOS, streamsWith } from '../helpers/scenarios.ts';

const inventory = devices();
const skip = inventory.devices.length === 0 ? `no GPU here: ${inventory.error ?? 'no CUDA devices'}` : false;
if (skip) console.log(`# GPU tests skipped: ${skip}`);

const keepDir = process.env.STREAMSCOPE_FIXTURE_DIR;
const workDir = keepDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'ss-gpu-'));
fs.mkdirSync(workDir, { recursive: true });
const table: Record<string, unknown>[] = [];

after(() => {
  if (table.length) {
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
  }
  if (process.env.STREAMSCOPE_GPU_RESULTS) fs.writeFileSync(process.env.STREAMSCOPE_GPU_RESULTS, JSON.stringify(table, null, 2));
  if (!keepDir) fs.rmSync(workDir, { recursive: true, force: true });
});

/** Small sizes: each recording stays a few hundred KB and runs in well under a second. */
const CHUNKS = 8;
const SIZES: Record<string, string> = { normalise: '20000', matmul: '512', transpose: '2048' };

/** What the runner says it issued: its last line, e.g. `... kernels=8 h2d=8 d2h=8 ok wall_ms=1.2`. */
interface RunnerSummary {
  kernels: number;
  h2d: number;
  d2h: number;
  streams: number;
  devices: number;
  ok: boolean;
}
const flagsOf = (t: Trace, streamId: number) => t.streams.find((s) => s.id === streamId)?.flags ?? 0;
function runnerSummary(stdout: string): RunnerSummary {
  const line = stdout
    .trim()
    .split('\n')
    .findLast((l) => l.startsWith('workload='));
  assert.ok(line, `the runner printed no summary line:\n${stdout}`);
  const field = (k: string) => Number(new RegExp(`\\b${k}=(\\d+)`).exec(line)![1]);
  return { kernels: field('kernels'), h2d: field('h2d'), d2h: field('d2h'), streams: field('streams'), devices: field('devices'), ok: / ok /.test(line) };
}

interface Loaded {
  trace: Trace;
  file: string;
  stdout: string;
  summary: RunnerSummary;
}

async function recordWorkload(workload: string, scenario: string): Promise<Loaded> {
  const file = path.join(workDir, `${workload}-${scenario}.sqlite`);
  const argv = workloadArgv({ workload, scenario, size: SIZES[workload], chunks: String(CHUNKS) });
  const r = await record({ output: file, overwrite: true, argv, meta: { workload, scenario }, stdio: 'pipe' });
  assert.equal(r.exitCode, 0, `runner failed (its result check or CUDA): ${r.stderr}${r.stdout}`);
  assert.ok(r.complete, `recording incomplete: ${r.incompleteReason}`);
  const summary = runnerSummary(r.stdout);
  assert.ok(summary.ok, "the runner's result check");
  // The zones the native ingest wrote (busy time, shape) are what SQL computes from the rows.
  const zones = zonesWrittenAndRecomputed(file, workDir);
  assert.ok(zones.written.length > 0);
  assert.deepEqual(zones.recomputed, zones.written);
  const db = openRecording(file, { readonly: true });
  try {
    return { trace: loadTrace(db), file, stdout: r.stdout, summary };
  } finally {
    db.close();
  }
}

for (const workload of ['normalise', 'matmul', 'transpose']) {
  describe(`${workload}`, { skip }, () => {
    for (const scenario of SCENARIOS) {
      it(`${scenario}`, async () => {
        const l = await recordWorkload(workload, scenario);
        // The recording holds exactly the work the runner says it issued.
        table.push(expectScenario(workload, scenario, l, { ...l.summary, chunks: CHUNKS }));
      });
    }
  });
}

describe('NVTX and API calls', { skip }, () => {
  it("records the runner's NVTX ranges and the launches behind each kernel", async () => {
    const l = await recordWorkload('normalise', 'concurrent');
    const ranges = queryCount(l.file, 'SELECT count(*) AS n FROM nvtx_ranges WHERE end_ns IS NOT NULL');
    const launched = queryCount(
      l.file,
      `SELECT count(*) AS n FROM kernels k JOIN contexts c ON c.id = k.context_id
        JOIN api_calls a ON a.correlation_id = k.correlation_id AND a.pid = c.pid`,
    );
    assert.ok(ranges > 0, 'NVTX ranges');
    assert.equal(launched, CHUNKS, 'every kernel joins its launch call');
    table.push({ workload: 'normalise', scenario: 'concurrent (nvtx)', nvtxRanges: ranges, kernelsWithLaunch: launched });
  });
});

const python = (script: string) => path.join(repoRoot, 'test/gpu/scripts', script);

describe('Python scripts', { skip }, () => {
  const recordScript = async (name: string, args: string[]) => {
    const file = path.join(workDir, `${name}.sqlite`);
    const r = await record({ output: file, overwrite: true, argv: ['python3', python(`${name}.py`), ...args], stdio: 'pipe' });
    assert.equal(r.exitCode, 0, r.stderr);
    assert.ok(r.complete, `incomplete: ${r.incompleteReason}`);
    const db = openRecording(file, { readonly: true });
    try {
      return { trace: loadTrace(db), file, meta: readMeta(db) };
    } finally {
      db.close();
    }
  };

  it('numba: one stream per array, overlapping', async () => {
    const { trace: t } = await recordScript('numba_streams', ['--arrays', '8']);
    assert.equal(count(t, isKernel(t)), 8);
    assert.ok(streamsWith(t, isKernel(t)).size >= 8);
    const ov = overlapByDevice(t).find((o) => o.all.count > 0)!;
    table.push({ script: 'numba_streams', kernels: 8, streams: streamsWith(t, () => true).size, overlapAll: ov.all.overlapFactor });
  });

  it('numba as users first write it: the diagnosis names pageable copies and the syncs between chunks', async () => {
    const { file } = await recordScript('numba_user_streams', ['--arrays', '8']);
    const db = openRecording(file, { readonly: true });
    try {
      const { trace: t, diagnosis } = analyze(db);
      assert.equal(count(t, isKernel(t)), 8);
      const kinds = diagnosis.findings.map((f) => f.kind);
      assert.ok(kinds.includes('pageable-async-copy'), `findings: ${kinds}`);
      assert.ok(
        diagnosis.findings.some((f) => f.kind === 'host-blocking-call' && f.fixId === 'remove-host-blocking'),
        `findings: ${kinds}`,
      );
      const ov = overlapByDevice(t).find((o) => o.all.count > 0)!;
      table.push({
        script: 'numba_user_streams',
        kernels: 8,
        overlapAll: ov.all.overlapFactor,
        findings: diagnosis.findings.map((f) => `${f.severity}:${f.kind}`).join(' '),
      });
    } finally {
      db.close();
    }
  });

  it('cupy: matmuls on non-blocking streams', async () => {
    const { trace: t } = await recordScript('cupy_streams', ['--streams', '4']);
    const streams = streamsWith(t, isKernel(t));
    assert.ok(streams.size >= 4, `kernel streams: ${streams.size}`);
    for (const s of streams) assert.ok(flagsOf(t, s) & StreamFlags.NonBlocking, 'non-blocking streams');
    table.push({ script: 'cupy_streams', kernels: count(t, isKernel(t)), streams: streams.size });
  });

  it('a process tree: the parent and two worker processes in one recording', async () => {
    const { trace: t, file } = await recordScript('multiprocess_cupy', ['--workers', '2']);
    const pids = queryCount(file, 'SELECT count(DISTINCT c.pid) AS n FROM kernels k JOIN contexts c ON c.id = k.context_id');
    assert.equal(pids, 3, 'kernels from 3 processes');
    // multiprocessing's Pool.terminate() ends its workers with SIGTERM: their
    // streams end with the collector's signal flush, so nothing is missing.
    assert.equal(queryCount(file, 'SELECT count(*) AS n FROM processes'), 3, 'three processes');
    assert.equal(queryCount(file, "SELECT count(*) AS n FROM meta WHERE key = 'complete' AND value = '1'"), 1, 'the recording is complete');
    assert.equal(queryCount(file, "SELECT count(*) AS n FROM devices WHERE uuid LIKE 'GPU-%'"), 1, 'one GPU, shared');
    table.push({ script: 'multiprocess_cupy', processes: pids, kernels: count(t, isKernel(t)) });
  });

  it('pytorch: the same kernel and copy counts as torch.profiler', async () => {
    const { trace: t } = await recordScript('torch_streams', ['--streams', '4']);
    const out = execFileSync('python3', [python('torch_streams.py'), '--streams', '4', '--torch-profiler', path.join(workDir, 'torch_streams.trace.json')], {
      encoding: 'utf8',
    });
    const torchCounts = (JSON.parse(out.trim().split('\n').at(-1)!) as { torch_profiler_counts: { kernels: number; memcpys: number } }).torch_profiler_counts;
    const ours = { kernels: count(t, isKernel(t)), memcpys: count(t, isCopy(t)) };
    table.push({
      script: 'torch_streams',
      ...Object.fromEntries(Object.entries(ours).map(([k, v]) => [`streamscope_${k}`, v])),
      torch_kernels: torchCounts.kernels,
      torch_memcpys: torchCounts.memcpys,
    });
    assert.deepEqual(ours, { kernels: torchCounts.kernels, memcpys: torchCounts.memcpys });
  });
});

describe('a target that ends badly keeps what was recorded', { skip }, () => {
  const scratchDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-gpu-kill-'));
  after(() => fs.rmSync(scratchDir, { recursive: true, force: true }));
  // A launch loop long enough to be stopped in the middle.
  const longLoop = () => workloadArgv({ workload: 'launch-loop', scenario: 'concurrent', iterations: '50000000', streams: '4' });

  for (const signal of ['SIGTERM', 'SIGINT', 'SIGKILL'] as const) {
    it(`${signal}: the recording is kept, marked incomplete, with the launches before the signal`, async () => {
      const file = path.join(scratchDir, `killed-${signal}.sqlite`); // large: never a fixture
      const r = await record({
        output: file,
        overwrite: true,
        argv: longLoop(),
        stdio: 'pipe',
        onStart: (pid) => setTimeout(() => process.kill(pid, signal), 3000),
      });
      assert.equal(r.signal, signal);
      assert.equal(r.complete, false);
      assert.match(r.incompleteReason ?? '', new RegExp(`killed by ${signal}`));
      const kernels = queryCount(file, 'SELECT count(*) AS n FROM kernels');
      // SIGTERM/SIGINT flush everything delivered; SIGKILL keeps what the periodic flushes wrote.
      assert.ok(kernels > 10000, `kernels kept: ${kernels}`);
      table.push({ case: `killed by ${signal}`, kernels, complete: r.complete });
    });
  }

  it('a crashing target: the collector flushes before it dies; the recording is kept, marked incomplete', async () => {
    const file = path.join(workDir, 'crashed.sqlite');
    // abort() right after the work, long before the next periodic flush:
    // only the crash-signal flush can save these kernels.
    const script = 'import cupy as cp, os\nx = cp.arange(1 << 20)\nfor _ in range(200): x += 1\ncp.cuda.Device().synchronize()\nos.abort()\n';
    const r = await record({ output: file, overwrite: true, argv: ['python3', '-c', script], stdio: 'pipe' });
    assert.equal(r.signal, 'SIGABRT');
    assert.equal(r.complete, false);
    const kernels = queryCount(file, 'SELECT count(*) AS n FROM kernels');
    assert.ok(kernels >= 200, `kernels kept: ${kernels}`);
    table.push({ case: 'os.abort()', kernels, complete: r.complete });
  });
});
