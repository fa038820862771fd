// `streamscope record`: start a target with the collector injected, ingest
// its record streams into a recording while it runs, and finish the
// recording with what is known about how it ended.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CaptureRange } from '../contract/record-request.ts';
import { VERSION } from '../contract/version.ts';
import { devices } from '../native/addon.ts';
import { finalizeRecording, type FinalState } from './finalize.ts';
import { preflight } from './preflight.ts';
import { ingested } from './progress.ts';
import { cuptiRefusalNotes } from './cupti-refusals.ts';
import { beginRecordingFile, followStreams } from './recording-file.ts';
import { RecordError } from './record-error.ts';
import { StreamDirectoryIngest, type DirectoryProgress } from './stream-ingest.ts';

export interface RecordOptions {
  output: string;
  overwrite?: boolean;
  /** The target command line. */
  argv: string[];
  /** Extra meta entries (e.g. workload and scenario of the bundled runner). */
  meta?: Record<string, string>;
  env?: NodeJS.ProcessEnv;
  /** Called after ingest polls while the target runs (at most every 250 ms: recording-file.ts). */
  onProgress?: (p: DirectoryProgress, elapsedMs: number) => void;
  /** Between ingest polls (default recording-file.ts POLL_MS). */
  pollMs?: number;
  /** stdio of the target; 'inherit' for the CLI, 'pipe' to capture in tests. */
  stdio?: 'inherit' | 'pipe' | 'ignore';
  /** Called once the recording file exists (still empty), before the target starts: `record --live` opens its viewer on it. */
  onCreated?: (output: string) => void;
  /** Called once the target runs, with its pid (the app shows it; tests signal it). */
  onStart?: (pid: number) => void;
  /** Called when the target has exited, before the last ingest, the indexes and the capture range. */
  onTargetExit?: (status: { code: number | null; signal: NodeJS.Signals | null }, p: DirectoryProgress, elapsedMs: number) => void;
  /** Keep only the activity inside this range (capture-range.ts), once the target has ended. */
  captureRange?: CaptureRange;
}

export interface RecordResult extends FinalState {
  /** Bytes of record streams ingested. */
  bytes: number;
  /** Target output when stdio is 'pipe'. */
  stdout: string;
  stderr: string;
}

export async function record(opts: RecordOptions): Promise<RecordResult> {
  const env = { ...(opts.env ?? process.env) };
  const checked = preflight(opts.argv, opts.output, env);

  const startedAt = new Date();
  const indexSql = beginRecordingFile(
    opts.output,
    {
      command: opts.argv.join(' '),
      argv: JSON.stringify(opts.argv),
      cwd: process.cwd(),
      host: os.hostname(),
      started_at: startedAt.toISOString(),
      recorder_version: VERSION,
      source: 'streamscope-collector',
      complete: false,
      incomplete_reason: 'recording in progress (or the recorder itself was killed)',
      ...opts.meta,
    },
    { overwrite: opts.overwrite },
  );
  opts.onCreated?.(path.resolve(opts.output));

  // Streams go next to the output, so they survive a recorder crash and can
  // be ingested again with `streamscope ingest`.
  const streamDir = fs.mkdtempSync(path.join(path.dirname(path.resolve(opts.output)), `.${path.basename(opts.output)}.streams-`));
  const ingest = new StreamDirectoryIngest(opts.output, { directory: streamDir });

  const child = spawn(checked.executable, opts.argv.slice(1), {
    argv0: opts.argv[0],
    env: {
      ...env,
      CUDA_INJECTION64_PATH: checked.collector,
      // The collector forwards NVTX to the CUPTI it is bound to (native/collector/nvtx_forward.cc).
      NVTX_INJECTION64_PATH: checked.collector,
      STREAMSCOPE_OUTPUT_DIR: streamDir,
      // Says when a profiler inside the target is refused CUPTI (cupti-refusals.ts); first, before any of the target's own.
      LD_PRELOAD: [checked.cuptiWatch, env.LD_PRELOAD].filter(Boolean).join(' '),
    },
    stdio: opts.stdio ?? 'inherit',
  });
  if (child.pid !== undefined) opts.onStart?.(child.pid);
  // This machine's GPUs (cuInit, NVML: 0.1-0.25 s), taken while the target
  // starts rather than before it: for the PCIe links and, where nothing is
  // recorded, to say whether there was a GPU at all (finalize.ts).
  const inventory = devices();
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
  });

  // The terminal delivers Ctrl-C to the whole process group, target included;
  // the recorder stays alive to keep what the target's collector flushed.
  // Signals sent to the recorder alone are passed on.
  const forward = (sig: NodeJS.Signals) => {
    if (sig === 'SIGINT' && process.stdin.isTTY) return;
    child.kill(sig);
  };
  process.on('SIGINT', forward);
  process.on('SIGTERM', forward);

  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
    child.on('error', (err) => reject(new RecordError(`cannot start ${opts.argv[0]}: ${err.message}`, 127)));
    child.on('exit', (code, signal) => resolve({ code, signal }));
  });

  const t0 = Date.now();
  let followed: Awaited<ReturnType<typeof followStreams<Awaited<typeof exited>>>>;
  try {
    followed = await followStreams({
      ingest,
      indexSql,
      ended: exited,
      pollMs: opts.pollMs,
      onProgress: opts.onProgress && ((p) => opts.onProgress!(p, Date.now() - t0)),
      onEnded: opts.onTargetExit && ((status, p) => opts.onTargetExit!(status, p, Date.now() - t0)),
    });
  } finally {
    process.off('SIGINT', forward);
    process.off('SIGTERM', forward);
  }
  const { value: status, progress, error: ingestError } = followed;
  const result = finalizeRecording(opts.output, progress, { ...status, pid: child.pid }, Date.now() - t0, ingestError, opts.captureRange, {
    inventory,
    notes: cuptiRefusalNotes(streamDir),
  });
  if (!ingestError) fs.rmSync(streamDir, { recursive: true, force: true });
  else result.incompleteReason += ` (the raw streams are kept in ${streamDir})`;
  return { ...result, bytes: ingested(progress).bytes, stdout, stderr };
}
