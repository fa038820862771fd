// Record jobs run the real `streamscope record --progress json` CLI. This
// machine has no GPU, so a job must end 'failed' with the CLI's no-driver
// message, quickly. What a recording on a GPU says is replayed from the
// CLI's real lines (test/fixtures/record-progress/, captured on an H100) by
// a stand-in CLI; test/gpu/record-progress.test.ts runs jobs on a GPU.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { devices } from '../../profiler/native/addon.ts';
import { probeGpu, recordArguments, RecordJobs, type CliInvocation } from '../../app/record-jobs.ts';
import type { RecordProgress } from '../../profiler/contract/api.ts';
import { tempDir } from '../helpers/native.ts';

const cli: CliInvocation = { command: process.execPath, args: [path.resolve(import.meta.dirname, '../../profiler/cli/streamscope.ts')] };
const hasGpu = devices().devices.length > 0;
const noOpen = async (): Promise<never> => {
  throw new Error('nothing should be opened');
};
const openStub = async (file: string) => ({ recordingId: 'r1', name: path.basename(file), path: file });
const fixture = (name: string) => path.resolve(import.meta.dirname, '../fixtures/record-progress', name);

/**
 * A stand-in for the CLI that writes the real stderr of a recording (a
 * fixture), a line every `pauseMs`, with its own `-o` as the output, and
 * creates that file (empty: the stub `open` does not read it) before the last line.
 */
function replaying(file: string, pauseMs = 120): CliInvocation {
  const script = `const fs = require('fs'), a = process.argv, out = a[a.indexOf('-o') + 1];
    const lines = fs.readFileSync(process.env.REPLAY, 'utf8').split('\\n').filter(Boolean);
    let i = 0;
    const next = () => {
      if (i === lines.length) return;
      const e = JSON.parse(lines[i]);
      if (e.output) e.output = out;
      if (++i === lines.length) fs.writeFileSync(out, '');
      process.stderr.write(JSON.stringify(e) + '\\n');
      setTimeout(next, ${pauseMs});
    };
    next();`;
  return { command: process.execPath, args: ['-e', script, '--'], env: { REPLAY: file } };
}

/** Every status a job goes through (sampled every 10 ms), consecutive repeats left out. */
async function follow(jobs: RecordJobs, first: RecordProgress): Promise<RecordProgress[]> {
  const seen = [first];
  for (;;) {
    const p = jobs.status(first.jobId);
    const last = seen.at(-1)!;
    if (p.state !== last.state || p.message !== last.message || p.records !== last.records) seen.push(p);
    if (p.state === 'done' || p.state === 'failed') return seen;
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('record jobs', () => {
  // How long these failures take is measured by `npm run bench -- --only responsiveness`, not bounded here (machine load).
  it.skipIf(hasGpu)('without a GPU: failed with the CLI no-driver message', async () => {
    const jobs = new RecordJobs({ outputDir: tempDir('jobs'), cli, open: noOpen });
    const first = jobs.start({ workload: { name: 'normalise', scenario: 'concurrent' } });
    expect(first.state).toBe('starting');
    expect(first.jobId).toMatch(/^rec-/);
    const end = await jobs.settled(first.jobId);
    expect(end).toEqual({ jobId: first.jobId, state: 'failed', records: 0, message: expect.stringMatching(/^no GPU to record on: NVIDIA driver not found/) });
    expect(jobs.status(first.jobId)).toEqual(end);
  });

  it.skipIf(hasGpu)('a command target fails the same way', async () => {
    const jobs = new RecordJobs({ outputDir: tempDir('jobs'), cli, open: noOpen });
    const end = await jobs.settled(jobs.start({ command: ['/bin/true'] }).jobId);
    expect(end.state).toBe('failed');
    expect(end.message).toMatch(/no GPU to record on/);
  });

  it('a recorder that never gets going is stopped at the start timeout', async () => {
    // A real process that hangs (ignores its arguments) stands in for a preflight that never returns.
    const hanging: CliInvocation = { command: process.execPath, args: ['-e', 'setTimeout(() => {}, 60_000)', '--'] };
    const jobs = new RecordJobs({ outputDir: tempDir('jobs'), cli: hanging, open: noOpen, startTimeoutMs: 300, killGraceMs: 300 });
    const end = await jobs.settled(jobs.start({ workload: { name: 'normalise', scenario: 'serial' } }).jobId);
    expect(end.state).toBe('failed');
    expect(end.message).toMatch(/did not start the target within/);
  });

  it('a recorder that cannot be started fails at once', async () => {
    const jobs = new RecordJobs({ outputDir: tempDir('jobs'), cli: { command: '/nonexistent/node', args: [] }, open: noOpen });
    const end = await jobs.settled(jobs.start({ command: ['x'] }).jobId);
    expect(end.state).toBe('failed');
    expect(end.message).toMatch(/cannot start the recorder/);
  });

  it("follows the CLI's phases to a done job: starting, running with what was ingested, finishing, done", async () => {
    const jobs = new RecordJobs({ outputDir: tempDir('jobs'), cli: replaying(fixture('launch-loop.stderr')), open: openStub });
    const first = jobs.start({ workload: { name: 'launch-loop', scenario: 'concurrent', args: ['--streams', '4', '--iterations', '200000'] } });
    const seen = await follow(jobs, first);
    const states = seen.map((p) => p.state).filter((s, i, all) => s !== all[i - 1]);
    expect(states).toEqual(['starting', 'running', 'finishing', 'done']);
    // The lines as the CLI wrote them on the H100: each running line's counts, in the dialog's words.
    expect(seen.filter((p) => p.state === 'running').map((p) => [p.records, p.message])).toEqual([
      [0, 'recording… 0 records from 0 process(es), 0.2 s'],
      [22851, 'recording… 22,851 records (1.6 MB) from 1 process(es), 0.4 s'],
      [151391, 'recording… 151,391 records (10.5 MB) from 1 process(es), 0.9 s'],
      [394454, 'recording… 394,454 records (27.3 MB) from 1 process(es), 1.4 s'],
    ]);
    expect(seen.find((p) => p.state === 'finishing')?.message).toBe('finishing the recording (indexes)…');
    const end = seen.at(-1)!;
    expect(end).toMatchObject({ state: 'done', records: 603241, message: '603,241 records from 1 process(es)' });
    expect(end.recording?.path).toMatch(/launch-loop-concurrent-[\d-]+\.sqlite$/);
  });

  it('a live job opens its recording while it runs (issue 14), and keeps it when done', async () => {
    const opened: string[] = [];
    const open = async (file: string) => (opened.push(file), openStub(file));
    const jobs = new RecordJobs({ outputDir: tempDir('jobs'), cli: replaying(fixture('launch-loop.stderr')), open });
    const first = jobs.start({ workload: { name: 'launch-loop', scenario: 'concurrent' }, live: true });
    const seen = await follow(jobs, first);
    // Opened once it runs: the page follows the file from there (the recorder made it before starting the target).
    const whileRunning = seen.filter((p) => p.state === 'running' && p.recording);
    expect(whileRunning.length).toBeGreaterThan(0);
    expect(seen.find((p) => p.state === 'starting')?.recording).toBeUndefined();
    expect(opened[0]).toBe(whileRunning[0]!.recording!.path);
    expect(seen.at(-1)).toMatchObject({ state: 'done', recording: { path: opened[0] } });
  });

  it('a job that is not live opens its recording only when done', async () => {
    const opened: string[] = [];
    const jobs = new RecordJobs({
      outputDir: tempDir('jobs'),
      cli: replaying(fixture('launch-loop.stderr'), 20),
      open: async (f) => (opened.push(f), openStub(f)),
    });
    const seen = await follow(jobs, jobs.start({ workload: { name: 'launch-loop', scenario: 'concurrent' } }));
    expect(seen.filter((p) => p.state !== 'done' && p.recording)).toEqual([]);
    expect(opened).toHaveLength(1);
  });

  it('a finished job says what its capture range did', async () => {
    const jobs = new RecordJobs({ outputDir: tempDir('jobs'), cli: replaying(fixture('normalise-capture-absent.stderr'), 5), open: openStub });
    const started = jobs.start({ workload: { name: 'normalise', scenario: 'concurrent' }, captureRange: 'nvtx:absent' });
    const end = await jobs.settled(started.jobId);
    expect(end.state, end.message).toBe('done');
    expect(end.message).toBe(
      "394 records from 1 process(es); warning: capture range nvtx:absent never occurred (no closed NVTX range named 'absent' was recorded; its ranges: " +
        "'issue chunk 0', 'issue chunk 1', 'issue chunk 2', 'issue chunk 3', 'issue chunk 4', 'issue chunk 5', 'issue chunk 6', 'issue chunk 7'): nothing was kept",
    );
  });

  it('a recording of nothing (a target that never initialised CUDA): failed, saying why', async () => {
    const jobs = new RecordJobs({ outputDir: tempDir('jobs'), cli: replaying(fixture('nothing-recorded.stderr'), 5), open: noOpen });
    const end = await jobs.settled(jobs.start({ command: ['true'] }).jobId);
    expect(end).toMatchObject({
      state: 'failed',
      records: 0,
      message: 'nothing was recorded: no CUDA activity was recorded: the target never initialised CUDA, or the collector could not load',
    });
  });

  it('a CLI that ends without a result line: failed with its last stderr line', async () => {
    // As when the CLI refuses an option before it reads --progress.
    const refusing: CliInvocation = {
      command: process.execPath,
      args: ['-e', "process.stderr.write('streamscope: Unknown option \\'--bogus\\'\\n'); process.exit(2)", '--'],
    };
    const jobs = new RecordJobs({ outputDir: tempDir('jobs'), cli: refusing, open: noOpen });
    const end = await jobs.settled(jobs.start({ command: ['x'] }).jobId);
    expect(end).toMatchObject({ state: 'failed', message: "Unknown option '--bogus'" });
  });

  it('unknown job ids are not-found', () => {
    const jobs = new RecordJobs({ outputDir: tempDir('jobs'), cli, open: noOpen });
    expect(() => jobs.status('rec-nope')).toThrow(expect.objectContaining({ code: 'not-found' }));
  });

  it.skipIf(hasGpu)('probeGpu answers false here', async () => {
    expect(await probeGpu(cli)).toBe(false);
  });
});

describe('CLI arguments', () => {
  it('builds the record command line', () => {
    expect(recordArguments({ workload: { name: 'matmul', scenario: 'events', args: ['--size', '512'] } }, '/o.sqlite')).toEqual([
      'record',
      '--force',
      '--progress',
      'json',
      '-o',
      '/o.sqlite',
      '--workload',
      'matmul',
      '--scenario',
      'events',
      '--size',
      '512',
    ]);
    expect(recordArguments({ command: ['python3', '-c', 'pass'] }, '/o.sqlite')).toEqual([
      'record',
      '--force',
      '--progress',
      'json',
      '-o',
      '/o.sqlite',
      '--',
      'python3',
      '-c',
      'pass',
    ]);
    expect(recordArguments({ command: ['python3', 'train.py'], captureRange: 'nvtx:step' }, '/o.sqlite')).toEqual([
      'record',
      '--force',
      '--progress',
      'json',
      '-o',
      '/o.sqlite',
      '--capture-range',
      'nvtx:step',
      '--',
      'python3',
      'train.py',
    ]);
    expect(recordArguments({ workload: { name: 'matmul', scenario: 'events' }, captureRange: 'cuda-profiler-api' }, '/o.sqlite')).toEqual([
      'record',
      '--force',
      '--progress',
      'json',
      '-o',
      '/o.sqlite',
      '--capture-range',
      'cuda-profiler-api',
      '--workload',
      'matmul',
      '--scenario',
      'events',
    ]);
  });

  it("doubles a % of the app's own output path, which record -o would read as a placeholder", () => {
    expect(recordArguments({ command: ['true'] }, '/data/100%/%r.sqlite').slice(4, 6)).toEqual(['-o', '/data/100%%/%%r.sqlite']);
  });
});
