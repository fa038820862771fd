// `streamscope record`: start a target with the collector injected, ingest
// its record streams into a recording while it runs, and finish the
// recording with what is known about how it ended.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beginBulkLoad, createRecording, writeMeta } from '../store/database.ts';
import type { CaptureRange } from '../contract/record-request.ts';
import { VERSION } from '../contract/version.ts';
import { finalizeRecording, type FinalState } from './finalize.ts';
import { preflight } from './preflight.ts';
import { ingested } from './progress.ts';
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
  /** Called after each ingest poll while the target runs. */
  onProgress?: (p: DirectoryProgress, elapsedMs: number) => void;
  pollMs?: number;
  /** stdio of the target; 'inherit' for the CLI, 'pipe' to capture in tests. */
  stdio?: 'inherit' | 'pipe' | 'ignore';
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

  const db = createRecording(opts.output, { overwrite: opts.overwrite });
  const startedAt = new Date();
  writeMeta(db, {
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
  });
  const indexSql = beginBulkLoad(db);
  db.close();

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
    },
    stdio: opts.stdio ?? 'inherit',
  });
  if (child.pid !== undefined) opts.onStart?.(child.pid);
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
  // The poll loop below only needs to know that the target has ended; its
  // exit status is awaited once the loop stops.
  let done = false;
  exited.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );

  const t0 = Date.now();
  const pollMs = opts.pollMs ?? 250;
  let ingestError: Error | null = null;
  let status: Awaited<typeof exited>;
  try {
    while (!done) {
      await new Promise((r) => setTimeout(r, pollMs));
      if (done) break;
      try {
        opts.onProgress?.(await ingest.poll(false), Date.now() - t0);
      } catch (err) {
        // A corrupt stream: stop ingesting it, let the target finish, report.
        ingestError = err as Error;
        break;
      }
    }
    status = await exited;
    opts.onTargetExit?.(status, ingest.progress(), Date.now() - t0);
    if (!ingestError) {
      try {
        await ingest.poll(true);
      } catch (err) {
        ingestError = err as Error;
      }
    }
  } finally {
    process.off('SIGINT', forward);
    process.off('SIGTERM', forward);
    await ingest.finish(indexSql);
  }

  const progress = ingest.progress();
  const result = finalizeRecording(opts.output, progress, { ...status, pid: child.pid }, Date.now() - t0, ingestError, opts.captureRange);
  if (!ingestError) fs.rmSync(streamDir, { recursive: true, force: true });
  else result.incompleteReason += ` (the raw streams are kept in ${streamDir})`;
  return { ...result, bytes: ingested(progress).bytes, stdout, stderr };
}
