// Recordings started from the app (File ▸ Record…, the renderer's record
// dialog): each job runs `streamscope record` as a child process, so a
// recording never shares the main process's event loop or its crash fate,
// and the app records exactly what the CLI records.
//
// The CLI runs with `--progress json` (profiler/record/progress.ts): one
// JSON object per line on stderr says each phase, what has been ingested,
// and at the end the result (done) or why nothing was recorded (failed),
// e.g. `no GPU to record on: NVIDIA driver not found (...)` from
// profiler/record/preflight.ts. The job's states follow the phases:
// starting (preflight: driver, CUPTI, collector) → running (the target
// runs) → finishing (target gone: ingest, indexes, then the recording is
// opened) → done | failed. Other stderr lines are the target's (or a usage
// error of the CLI before it reads --progress): the last is kept for a job
// that ends without a result line. Nothing waits forever: a job that does
// not reach 'running' within startTimeoutMs, or runs past maxDurationMs, is
// stopped (SIGINT, then SIGKILL) and fails saying so.
//
// Plain module (no Electron): the app passes how to start the CLI.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { RecordingHandle, RecordProgress, RecordRequest } from '../profiler/contract/api.ts';
import { parseProgressEvent, type DoneEvent, type FailedEvent } from '../profiler/record/progress.ts';
import { ApiError } from './ipc.ts';

export interface CliInvocation {
  /** Executable: Node 22 (dev), or Electron's own binary with ELECTRON_RUN_AS_NODE=1. */
  command: string;
  /** Arguments before the subcommand, e.g. [profiler/cli/streamscope.ts]. */
  args: string[];
  env?: NodeJS.ProcessEnv;
}

export interface RecordJobsOptions {
  /** Where recordings go (the app: userData/recordings). Created when missing. */
  outputDir: string;
  cli: CliInvocation;
  /** Turns a finished recording file into a handle (opens it in the session registry). */
  open: (file: string) => Promise<RecordingHandle>;
  /** Max time in 'starting' (preflight) before the job is stopped. */
  startTimeoutMs?: number;
  /** Max time of a whole job. */
  maxDurationMs?: number;
  /** Grace between SIGINT and SIGKILL when stopping. */
  killGraceMs?: number;
  cwd?: string;
  now?: () => Date;
}

type State = RecordProgress['state'];

interface Job {
  id: string;
  state: State;
  records: number;
  message: string;
  recording?: RecordingHandle;
  output: string;
  /** RecordRequest.live: opened while it runs. */
  live: boolean;
  child: ChildProcess | null;
  stderrTail: string[];
  stdoutTail: string;
  timers: NodeJS.Timeout[];
  stopReason: string | null;
  /** The CLI's last line: the recording written, or why not. */
  result: DoneEvent | FailedEvent | null;
  settled: Promise<void>;
}

/** The CLI arguments of a request (after the subcommand). Requests are checked by ipc.ts first. */
export function recordArguments(request: RecordRequest, output: string): string[] {
  // -o takes placeholders (%h, %r, …): a path of the app's own is passed with its % doubled.
  const args = ['record', '--force', '--progress', 'json', '-o', output.replaceAll('%', '%%')];
  if (request.captureRange !== undefined) args.push('--capture-range', request.captureRange);
  if (request.workload) {
    args.push('--workload', request.workload.name, '--scenario', request.workload.scenario);
    for (const a of request.workload.args ?? []) args.push(a);
  } else if (request.command && request.command.length > 0) {
    args.push('--');
    for (const a of request.command) args.push(a);
  } else {
    throw new ApiError('bad-request', 'record: give a workload or a command');
  }
  return args;
}

function stamp(d: Date): string {
  return d.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
}

function safeName(s: string): string {
  return s.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 60) || 'recording';
}

export class RecordJobs {
  readonly #opts: Required<Omit<RecordJobsOptions, 'cwd'>> & { cwd: string | undefined };
  readonly #jobs = new Map<string, Job>();

  constructor(opts: RecordJobsOptions) {
    this.#opts = {
      startTimeoutMs: 60_000,
      maxDurationMs: 2 * 60 * 60_000,
      killGraceMs: 5_000,
      now: () => new Date(),
      ...opts,
      cwd: opts.cwd,
    };
  }

  /** Starts a job; answers at once with its first progress ('starting', or 'failed'). */
  start(request: RecordRequest): RecordProgress {
    const id = `rec-${randomUUID()}`;
    const base = request.workload ? `${request.workload.name}-${request.workload.scenario}` : path.basename(request.command?.[0] ?? 'recording');
    fs.mkdirSync(this.#opts.outputDir, { recursive: true });
    let output = path.join(this.#opts.outputDir, `${safeName(base)}-${stamp(this.#opts.now())}.sqlite`);
    for (let n = 2; fs.existsSync(output) || this.#outputTaken(output); n++) {
      output = path.join(this.#opts.outputDir, `${safeName(base)}-${stamp(this.#opts.now())}-${n}.sqlite`);
    }
    const args = [...this.#opts.cli.args, ...recordArguments(request, output)];
    let resolveSettled!: () => void;
    const job: Job = {
      id,
      state: 'starting',
      records: 0,
      message: 'checking the GPU, driver and CUPTI…',
      output,
      live: request.live === true,
      child: null,
      stderrTail: [],
      stdoutTail: '',
      timers: [],
      stopReason: null,
      result: null,
      settled: new Promise((r) => {
        resolveSettled = r;
      }),
    };
    this.#jobs.set(id, job);

    let child: ChildProcess;
    try {
      child = spawn(this.#opts.cli.command, args, {
        cwd: this.#opts.cwd,
        env: { ...process.env, ...this.#opts.cli.env },
        stdio: ['ignore', 'pipe', 'pipe'],
        // Own process group: stopping the job reaches the target too.
        detached: process.platform !== 'win32',
      });
    } catch (err) {
      this.#fail(job, `cannot start the recorder: ${(err as Error).message}`);
      resolveSettled();
      return this.status(id);
    }
    job.child = child;

    let stderrBuf = '';
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      stderrBuf += chunk;
      const parts = stderrBuf.split(/[\r\n]/);
      stderrBuf = parts.pop()!;
      for (const line of parts) this.#onStderrLine(job, line);
    });
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (chunk: string) => {
      // The target's own output: the last line is a useful "what is it doing".
      job.stdoutTail = (job.stdoutTail + chunk).slice(-4096);
    });

    job.timers.push(
      setTimeout(() => {
        if (job.state === 'starting') this.#stop(job, `the recorder did not start the target within ${Math.round(this.#opts.startTimeoutMs / 1000)} s`);
      }, this.#opts.startTimeoutMs),
    );
    job.timers.push(
      setTimeout(() => {
        if (job.state !== 'done' && job.state !== 'failed')
          this.#stop(job, `stopped after the longest recording time (${Math.round(this.#opts.maxDurationMs / 60_000)} min)`);
      }, this.#opts.maxDurationMs),
    );
    for (const t of job.timers) t.unref();

    child.on('error', (err) => {
      this.#clearTimers(job);
      this.#fail(job, `cannot start the recorder (${this.#opts.cli.command}): ${err.message}`);
      resolveSettled();
    });
    child.on('close', (code, signal) => {
      if (stderrBuf) this.#onStderrLine(job, stderrBuf);
      this.#clearTimers(job);
      this.#finish(job, code, signal).finally(resolveSettled);
    });
    return this.status(id);
  }

  status(jobId: string): RecordProgress {
    const job = this.#jobs.get(jobId);
    if (!job) throw new ApiError('not-found', `no recording job ${jobId}`);
    const p: RecordProgress = { jobId: job.id, state: job.state, records: job.records, message: job.message };
    if (job.recording) p.recording = job.recording;
    return p;
  }

  /** Resolves when the job has ended (done or failed). */
  async settled(jobId: string): Promise<RecordProgress> {
    const job = this.#jobs.get(jobId);
    if (!job) throw new ApiError('not-found', `no recording job ${jobId}`);
    await job.settled;
    return this.status(jobId);
  }

  /** Stops every running job (the app is quitting). */
  async stopAll(reason = 'the app was closed'): Promise<void> {
    const running = [...this.#jobs.values()].filter((j) => j.state !== 'done' && j.state !== 'failed');
    for (const job of running) this.#stop(job, reason);
    await Promise.all(running.map((j) => j.settled));
  }

  #outputTaken(output: string): boolean {
    for (const j of this.#jobs.values()) if (j.output === output) return true;
    return false;
  }

  #onStderrLine(job: Job, raw: string): void {
    const line = raw.trim();
    if (!line) return;
    const event = parseProgressEvent(line);
    if (!event) {
      job.stderrTail.push(line);
      if (job.stderrTail.length > 50) job.stderrTail.shift();
      return;
    }
    if (job.state === 'done' || job.state === 'failed') return;
    job.records = event.records;
    switch (event.phase) {
      case 'preflight':
        job.message = 'checking the GPU, driver and CUPTI…';
        break;
      case 'running': {
        // A live job: the recording opens once it exists, and the page follows it as it grows.
        if (job.live && job.state !== 'running') this.#openLive(job);
        job.state = 'running';
        const mb = event.bytes > 0 ? ` (${(event.bytes / 1e6).toFixed(1)} MB)` : '';
        const target = job.stdoutTail.trim().split('\n').pop()?.slice(0, 200);
        job.message = `recording… ${event.records.toLocaleString('en-US')} records${mb} from ${event.processes} process(es), ${(event.elapsedMs / 1000).toFixed(1)} s${target ? ` — ${target}` : ''}`;
        break;
      }
      case 'finishing':
        job.state = 'finishing';
        job.message = 'finishing the recording (indexes)…';
        break;
      case 'done':
      case 'failed':
        job.result = event;
        if (event.phase === 'done') job.state = 'finishing';
        break;
    }
  }

  async #finish(job: Job, code: number | null, signal: NodeJS.Signals | null): Promise<void> {
    if (job.state === 'failed') return;
    const result = job.result;
    if (job.stopReason && !(result?.phase === 'done' && result.records > 0)) {
      this.#fail(job, job.stopReason);
      return;
    }
    if (result?.phase === 'failed') {
      this.#fail(job, result.error);
      return;
    }
    if (!result) {
      // No result line: the CLI refused its arguments, or died.
      const last = job.stderrTail.at(-1);
      this.#fail(job, last?.replace(/^streamscope: /, '') ?? (signal ? `the recorder was killed (${signal})` : `the recorder exited with code ${code}`));
      return;
    }
    if (result.records === 0 || !fs.existsSync(job.output)) {
      const collector = result.collectorErrors.at(-1);
      const why = collector ? `collector (pid ${collector.pid}): ${collector.message}` : (result.incompleteReason ?? `the recorder exited with code ${code}`);
      this.#fail(job, `nothing was recorded: ${why}`);
      return;
    }
    job.state = 'finishing';
    job.message = 'opening the recording…';
    try {
      job.recording = await this.#opts.open(job.output);
    } catch (err) {
      this.#fail(job, `recorded ${job.output}, but it cannot be opened: ${(err as Error).message}`);
      return;
    }
    const parts = [`${result.records.toLocaleString('en-US')} records from ${result.processes} process(es)`];
    if (!result.complete) parts.push(`incomplete: ${result.incompleteReason}`);
    if (result.targetSignal) parts.push(`the target was killed by ${result.targetSignal}`);
    else if (result.targetExitCode !== 0 && result.targetExitCode !== null) parts.push(`the target exited with code ${result.targetExitCode}`);
    if (job.stopReason) parts.push(job.stopReason);
    if (result.capture) parts.push(result.capture.message);
    for (const note of result.notes) parts.push(note);
    job.state = 'done';
    job.message = parts.join('; ');
  }

  #openLive(job: Job): void {
    this.#opts.open(job.output).then(
      (handle) => {
        if (job.state === 'running' || job.state === 'finishing') job.recording ??= handle;
      },
      (err: unknown) => {
        // Not fatal: the recording goes on, and opens when it is done.
        job.stderrTail.push(`the live view could not open ${job.output}: ${(err as Error).message}`);
      },
    );
  }

  #fail(job: Job, message: string): void {
    job.state = 'failed';
    job.message = message;
    this.#clearTimers(job);
  }

  #clearTimers(job: Job): void {
    for (const t of job.timers) clearTimeout(t);
    job.timers = [];
  }

  #stop(job: Job, reason: string): void {
    job.stopReason ??= reason;
    const child = job.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const kill = (sig: NodeJS.Signals) => {
      try {
        // The recorder is a group leader (detached): signal the group, target included.
        if (child.pid !== undefined && process.platform !== 'win32') process.kill(-child.pid, sig);
        else child.kill(sig);
      } catch {
        // Already gone.
      }
    };
    // SIGINT first: the recorder keeps what the target's collector flushed.
    kill('SIGINT');
    const t = setTimeout(() => kill('SIGKILL'), this.#opts.killGraceMs);
    t.unref();
    child.once('close', () => clearTimeout(t));
  }
}

/**
 * Whether this machine can record: `streamscope devices --json` in a child
 * process (the driver is loaded there, not in the app), answering false on
 * any failure or after `timeoutMs`.
 */
export function probeGpu(cli: CliInvocation, timeoutMs = 15_000): Promise<boolean> {
  return new Promise((resolve) => {
    let out = '';
    let child: ChildProcess;
    try {
      child = spawn(cli.command, [...cli.args, 'devices', '--json'], {
        env: { ...process.env, ...cli.env },
        stdio: ['ignore', 'pipe', 'ignore'],
      });
    } catch {
      resolve(false);
      return;
    }
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      resolve(false);
    }, timeoutMs);
    timer.unref();
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (d: string) => {
      out += d;
    });
    child.on('error', () => {
      clearTimeout(timer);
      resolve(false);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      try {
        const inv = JSON.parse(out) as { devices?: unknown[] };
        resolve(code === 0 && Array.isArray(inv.devices) && inv.devices.length > 0);
      } catch {
        resolve(false);
      }
    });
  });
}
