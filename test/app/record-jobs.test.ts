// Record jobs run the real `streamscope record` CLI. This machine has no GPU,
// so a job must end 'failed' with the CLI's no-driver message, quickly.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { devices } from '../../profiler/native/addon.ts';
import { parseProgressLine, parseResultLine, probeGpu, recordArguments, RecordJobs, type CliInvocation } from '../../app/record-jobs.ts';
import { tempDir } from '../helpers/native.ts';

const cli: CliInvocation = { command: process.execPath, args: [path.resolve(import.meta.dirname, '../../profiler/cli/streamscope.ts')] };
const hasGpu = devices().devices.length > 0;
const noOpen = async (): Promise<never> => { throw new Error('nothing should be opened'); };

describe('record jobs', () => {
  it.skipIf(hasGpu)('without a GPU: failed with the CLI no-driver message within a few seconds', async () => {
    const jobs = new RecordJobs({ outputDir: tempDir('jobs'), cli, open: noOpen });
    const t0 = Date.now();
    const first = jobs.start({ workload: { name: 'normalise', scenario: 'concurrent' } });
    expect(first.state).toBe('starting');
    expect(first.jobId).toMatch(/^rec-/);
    const end = await jobs.settled(first.jobId);
    expect(Date.now() - t0).toBeLessThan(10_000);
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
    const t0 = Date.now();
    const end = await jobs.settled(jobs.start({ workload: { name: 'normalise', scenario: 'serial' } }).jobId);
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(end.state).toBe('failed');
    expect(end.message).toMatch(/did not start the target within/);
  });

  it('a recorder that cannot be started fails at once', async () => {
    const jobs = new RecordJobs({ outputDir: tempDir('jobs'), cli: { command: '/nonexistent/node', args: [] }, open: noOpen });
    const end = await jobs.settled(jobs.start({ command: ['x'] }).jobId);
    expect(end.state).toBe('failed');
    expect(end.message).toMatch(/cannot start the recorder/);
  });

  it('a finished job says what its capture range did (the CLI line after the result)', async () => {
    // A stand-in CLI that "records" at once: the result line, then the capture range's warning.
    const script = `const a = process.argv, out = a[a.indexOf('-o') + 1];
      require('fs').writeFileSync(out, '');
      process.stderr.write('streamscope: 10 records from 1 process(es) → ' + out + ' (complete)\\n');
      process.stderr.write("streamscope: warning: capture range nvtx:stepp never occurred (no closed NVTX range named 'stepp' was recorded): nothing was kept\\n");`;
    const fake: CliInvocation = { command: process.execPath, args: ['-e', script, '--'] };
    const jobs = new RecordJobs({ outputDir: tempDir('jobs'), cli: fake, open: async (file) => ({ recordingId: 'r1', name: path.basename(file), path: file }) });
    const started = jobs.start({ command: ['python3', 'train.py'], captureRange: 'nvtx:stepp' });
    const end = await jobs.settled(started.jobId);
    expect(end.state, end.message).toBe('done');
    expect(end.message).toBe("10 records from 1 process(es); warning: capture range nvtx:stepp never occurred (no closed NVTX range named 'stepp' was recorded): nothing was kept");
  });

  it('unknown job ids are not-found', () => {
    const jobs = new RecordJobs({ outputDir: tempDir('jobs'), cli, open: noOpen });
    expect(() => jobs.status('rec-nope')).toThrow(expect.objectContaining({ code: 'not-found' }));
  });

  it.skipIf(hasGpu)('probeGpu answers false here, quickly', async () => {
    const t0 = Date.now();
    expect(await probeGpu(cli)).toBe(false);
    expect(Date.now() - t0).toBeLessThan(10_000);
  });
});

describe('CLI lines and arguments', () => {
  it('parses the result and progress lines the CLI prints', () => {
    expect(parseResultLine('streamscope: 12,345 records from 2 process(es) → /r/x.sqlite (complete)')).toEqual({
      records: 12345, processes: 2, output: '/r/x.sqlite', complete: true, incompleteReason: null,
    });
    expect(parseResultLine('streamscope: 10 records from 1 process(es) → x.sqlite (INCOMPLETE: target killed by SIGKILL)')).toMatchObject({
      complete: false, incompleteReason: 'target killed by SIGKILL',
    });
    expect(parseResultLine('streamscope: no GPU to record on: x')).toBeNull();
    expect(parseProgressLine('\x1b[Kstreamscope: recording… 1,000 records from 1 process(es), 2.5 s')).toEqual({ records: 1000, processes: 1, seconds: 2.5 });
  });

  it('builds the record command line', () => {
    expect(recordArguments({ workload: { name: 'matmul', scenario: 'events', args: ['--size', '512'] } }, '/o.sqlite'))
      .toEqual(['record', '--force', '-o', '/o.sqlite', '--workload', 'matmul', '--scenario', 'events', '--size', '512']);
    expect(recordArguments({ command: ['python3', '-c', 'pass'] }, '/o.sqlite'))
      .toEqual(['record', '--force', '-o', '/o.sqlite', '--', 'python3', '-c', 'pass']);
    expect(recordArguments({ command: ['python3', 'train.py'], captureRange: 'nvtx:step' }, '/o.sqlite'))
      .toEqual(['record', '--force', '-o', '/o.sqlite', '--capture-range', 'nvtx:step', '--', 'python3', 'train.py']);
    expect(recordArguments({ workload: { name: 'matmul', scenario: 'events' }, captureRange: 'cuda-profiler-api' }, '/o.sqlite'))
      .toEqual(['record', '--force', '-o', '/o.sqlite', '--capture-range', 'cuda-profiler-api', '--workload', 'matmul', '--scenario', 'events']);
  });
});
