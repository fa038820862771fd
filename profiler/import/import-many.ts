// `streamscope import A.json B.json …` (or a folder of traces): every trace
// into its own recording, on worker threads (import-worker.ts, through
// base/worker-pool.ts as `summarize` runs its files), one trace at a time
// each. A trace that cannot be imported is said with its problem and the
// others still import; nothing existing is replaced without `overwrite`,
// and no input is ever an output (importTrace, store/output-file.ts).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { runOnWorkers, workerEntry } from '../base/worker-pool.ts';
import { oneLine } from '../store/recording-error.ts';
import { importTrace } from './index.ts';
import type { ImportResult } from './kineto.ts';

export interface ImportRequest {
  n: number;
  trace: string;
  output: string;
  format?: string;
  overwrite?: boolean;
}

/** One trace's outcome: `problem` is one line that starts with the file it is about (the trace, or its output). */
export type ImportAnswer = { n: number; ok: true; result: ImportResult; seconds: number } | { n: number; ok: false; problem: string };

export type ImportOutcome = { trace: string; output: string } & ({ ok: true; result: ImportResult; seconds: number } | { ok: false; problem: string });

export interface ImportManyOptions {
  /** The traces' format (default: each one's own, from its content). */
  format?: string;
  /** Replace existing recordings (`--force`). */
  overwrite?: boolean;
  /** Worker threads (default: one per core, at most one per trace); 0 imports here, one after the other. */
  workers?: number;
  /** As each trace is done: its outcome, how many are done, of how many. */
  onFile?: (outcome: ImportOutcome, done: number, of: number) => void;
}

/** What a folder given as an input holds that is imported: JSON traces, gzipped or not (a folder's .sqlite files are taken for recordings, not Nsight exports). */
const TRACE_IN_FOLDER = /\.json(\.gz)?$/i;

/**
 * The traces `inputs` name: each file as given, each folder's traces
 * (TRACE_IN_FOLDER, not its subfolders) in name order. A folder with none
 * is an error naming it.
 */
export function tracesOf(inputs: readonly string[]): string[] {
  return inputs.flatMap((input) => {
    let isFolder = false;
    try {
      isFolder = fs.statSync(input).isDirectory();
    } catch {
      // Not there, or not readable: the import says so, of this trace.
    }
    if (!isFolder) return [input];
    const found = fs
      .readdirSync(input, { withFileTypes: true })
      .filter((e) => !e.isDirectory() && TRACE_IN_FOLDER.test(e.name))
      .map((e) => path.join(input, e.name))
      .sort();
    if (found.length === 0) throw new Error(`${input}: no traces in this folder (*.json, *.json.gz)`);
    return found;
  });
}

/**
 * The recording a trace is imported into when several are: the trace's name
 * with its .json, .json.gz, .gz or .sqlite (an Nsight export) ending
 * replaced by .sqlite, in `folder` or beside the trace. An Nsight export
 * beside its recording would be its own output, which is refused: give a
 * folder.
 */
export function recordingFor(trace: string, folder?: string): string {
  const name = `${path.basename(trace).replace(/(\.json(\.gz)?|\.gz|\.sqlite)$/i, '')}.sqlite`;
  return path.join(folder ?? path.dirname(trace), name);
}

/** Imports one trace: what a worker does with each request, and what imports run here do. */
export async function importOne(request: ImportRequest): Promise<ImportAnswer> {
  const start = performance.now();
  try {
    const result = await importTrace(request.trace, request.output, { format: request.format, overwrite: request.overwrite });
    return { n: request.n, ok: true, result, seconds: (performance.now() - start) / 1000 };
  } catch (err) {
    // The importers' errors (TraceFormatError, RecordingFileError) start with the file they are about; anything else is said of the trace.
    const message = err instanceof Error ? err.message : String(err);
    const named = message.startsWith(`${request.trace}:`) || message.startsWith(`${request.output}:`);
    return { n: request.n, ok: false, problem: oneLine(named ? message : `${request.trace}: ${message}`) };
  }
}

/**
 * Imports every trace of `pairs` into its output, in parallel on worker
 * threads, and returns each one's outcome in the order given. Two traces
 * that would write one recording: the second is refused before anything
 * runs (the first imports).
 */
export async function importMany(pairs: readonly { trace: string; output: string }[], opts: ImportManyOptions = {}): Promise<ImportOutcome[]> {
  const outcomes: (ImportOutcome | undefined)[] = pairs.map(() => undefined);
  let done = 0;
  const finish = (n: number, answer: ImportAnswer) => {
    const { trace, output } = pairs[n]!;
    const outcome: ImportOutcome = answer.ok
      ? { trace, output, ok: true, result: answer.result, seconds: answer.seconds }
      : { trace, output, ok: false, problem: answer.problem };
    outcomes[n] = outcome;
    opts.onFile?.(outcome, ++done, pairs.length);
  };
  const requests: ImportRequest[] = [];
  const writer = new Map<string, string>();
  pairs.forEach(({ trace, output }, n) => {
    const key = path.resolve(output);
    const first = writer.get(key);
    if (first !== undefined) {
      finish(n, { n, ok: false, problem: `${trace}: its recording ${output} is also ${first}'s: import one of them on its own, with -o` });
      return;
    }
    writer.set(key, trace);
    requests.push({ n, trace, output, format: opts.format, overwrite: opts.overwrite });
  });
  const workers = Math.min(opts.workers ?? os.availableParallelism(), requests.length);
  if (workers === 0) {
    for (const request of requests) finish(request.n, await importOne(request));
  } else {
    await runOnWorkers('an import worker', workerEntry('import-worker', import.meta.url), requests, workers, (answer: ImportAnswer) =>
      finish(answer.n, answer),
    );
  }
  return outcomes as ImportOutcome[];
}
