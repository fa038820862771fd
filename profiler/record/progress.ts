// `streamscope record --progress json`: the recorder's progress for
// programs (the desktop app's record jobs, scripts, CI), one JSON object per
// line on stderr, in place of the human lines. The target's own stdout and
// stderr pass through untouched beside them, so a reader takes the lines
// that hold `{"streamscope":"record-progress"` and leaves the rest (a target
// that left a line unfinished may put text in front of ours: the object
// starts at the marker).
//
// Phases, in order: preflight (driver, CUPTI, collector, output checked) →
// running (the target runs; a line after each ingest poll, every 250 ms) →
// finishing (the target has exited: last ingest, indexes, capture range,
// compaction) → done (the recording is written) | failed (nothing was
// recorded: preflight refused, the target could not start, bad usage). A
// `failed` line may follow any phase; `done` and `failed` are the last line.
//
// Every line carries `version`, `phase`, `elapsedMs` (since the command
// started), `output` (absolute path of the recording), and what was ingested
// so far: `records`, `bytes` (of record streams) and `processes` (streams,
// one per CUDA process).
import path from 'node:path';
import type { CaptureResult } from './capture-range.ts';
import type { DirectoryProgress } from './stream-ingest.ts';

export const PROGRESS_MARKER = '{"streamscope":"record-progress"';
export const PROGRESS_VERSION = 1;

export type RecordPhase = 'preflight' | 'running' | 'finishing' | 'done' | 'failed';

export interface Ingested {
  records: number;
  /** Bytes of record streams ingested. */
  bytes: number;
  /** Record streams seen: one per process that initialised CUDA. */
  processes: number;
}

interface Common extends Ingested {
  streamscope: 'record-progress';
  version: typeof PROGRESS_VERSION;
  elapsedMs: number;
  output: string;
}

export interface PreflightEvent extends Common {
  phase: 'preflight';
}

export interface RunningEvent extends Common {
  phase: 'running';
  /** The target's pid. */
  pid: number | null;
}

export interface FinishingEvent extends Common {
  phase: 'finishing';
  targetExitCode: number | null;
  targetSignal: string | null;
}

/** What `--capture-range` did; `message` is the line the text mode prints. */
export interface CaptureEvent {
  spec: string;
  /** It could not be applied: the recording holds everything recorded. */
  error: string | null;
  /** It never occurred: nothing was kept. */
  neverOccurred: string | null;
  windows: number | null;
  kept: CaptureResult['kept'] | null;
  dropped: CaptureResult['dropped'] | null;
  message: string;
}

export interface DoneEvent extends Common {
  phase: 'done';
  complete: boolean;
  incompleteReason: string | null;
  targetExitCode: number | null;
  targetSignal: string | null;
  /** What `streamscope record` exits with (the target's code; 1 when nothing useful was recorded). */
  exitCode: number;
  collectorErrors: { pid: number; code: number; message: string }[];
  notes: string[];
  capture: CaptureEvent | null;
}

export interface FailedEvent extends Common {
  phase: 'failed';
  /** Why, in the words the text mode prints after `streamscope: `. */
  error: string;
  exitCode: number;
}

export type ProgressEvent = PreflightEvent | RunningEvent | FinishingEvent | DoneEvent | FailedEvent;

/** Phase-specific fields of an event; the common ones are filled in by `progressLine`. */
export type EventFields<E extends ProgressEvent = ProgressEvent> = E extends ProgressEvent ? Omit<E, keyof Common> & Partial<Ingested> : never;

export function ingested(p: DirectoryProgress | null): Ingested {
  if (!p) return { records: 0, bytes: 0, processes: 0 };
  let bytes = 0;
  for (const f of p.files.values()) bytes += f.bytesConsumed;
  return { records: p.records, bytes, processes: p.files.size };
}

/** One event as its line (with the newline). */
export function progressLine(fields: EventFields, common: { elapsedMs: number; output: string }): string {
  // Key order: the marker first, then the phase (readable in a terminal).
  const event = {
    streamscope: 'record-progress',
    version: PROGRESS_VERSION,
    phase: fields.phase as RecordPhase,
    elapsedMs: Math.round(common.elapsedMs),
    output: path.resolve(common.output),
    records: 0,
    bytes: 0,
    processes: 0,
  };
  Object.assign(event, fields);
  return JSON.stringify(event) + '\n';
}

const PHASES: readonly string[] = ['preflight', 'running', 'finishing', 'done', 'failed'];

/** The event on a line of `record --progress json`'s stderr; null for any other line (the target's output). */
export function parseProgressEvent(line: string): ProgressEvent | null {
  const at = line.indexOf(PROGRESS_MARKER);
  if (at < 0) return null;
  let v: unknown;
  try {
    v = JSON.parse(line.slice(at).trim());
  } catch {
    return null;
  }
  if (typeof v !== 'object' || v === null) return null;
  const e = v as Partial<ProgressEvent>;
  if (e.version !== PROGRESS_VERSION || typeof e.phase !== 'string' || !PHASES.includes(e.phase)) return null;
  if (typeof e.records !== 'number' || typeof e.bytes !== 'number' || typeof e.processes !== 'number' || typeof e.elapsedMs !== 'number') return null;
  return e as ProgressEvent;
}
