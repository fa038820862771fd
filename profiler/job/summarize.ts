// The summaries of a job's recordings (summary.ts): each taken from its
// recording where it is current (store/rank-summary.ts), else built — on
// worker threads, one recording at a time each (summary-worker.ts), or here
// with the loader's threads — and, for `streamscope summarize`, stored in
// the recording, so that the next analysis of the job reads a row per rank.
// A recording that cannot be written keeps no summary: it is summarized
// again each time, which the answer says. With `findings`, each summary
// holds its rank's top findings (summary.ts TopFindings): a stored one
// without them is built again.
import os from 'node:os';
import { runOnWorkers, workerEntry } from '../base/worker-pool.ts';
import { ColumnPool } from '../native/addon.ts';
import { openRecording } from '../store/database.ts';
import { RecordingFileError } from '../store/recording-error.ts';
import { readRankSummary, writeRankSummaries } from '../store/rank-summary.ts';
import { buildRankSummaries, SUMMARY_SCOPES, type RankSummary, type SummaryScope } from './summary.ts';
import type { SummaryAnswer, SummaryRequest } from './summary-worker.ts';

export interface SummarizeOptions {
  /** The scopes wanted (default: both). */
  scopes?: readonly SummaryScope[];
  /** Store what was built in each recording (`summarize`); a report only reads. */
  store?: boolean;
  /** Build again even where a current summary is stored. */
  force?: boolean;
  /**
   * Each summary with its rank's top findings (`summarize --findings`, the recorder's): a stored summary without them is
   * built again. Without: a stored one is taken whether it holds them or not.
   */
  findings?: boolean;
  /** Worker threads (default: one per core, at most one per recording to build); 0 builds here with every core. */
  workers?: number;
  /** As each recording is done: how many, of how many. */
  onFile?: (done: number, of: number) => void;
}

export interface FileSummaries {
  file: string;
  /** By scope (built ones parsed when first read: \`summarize\` itself reads none, a rank's ~1.4 MB of JSON at 1 M operations). */
  summaries: Partial<Record<SummaryScope, RankSummary>>;
  /** Milliseconds spent building them (stored: when they were built). */
  ms: number;
  /** Read from the recording (current), or built now. */
  from: 'stored' | 'built';
  /** Whether its summaries hold the rank's top findings (built with `findings`, or stored with them). */
  findings: boolean;
  /** For a built one with `store`: whether it was written into the recording, and if not, why. */
  stored: boolean;
  notStoredBecause?: string;
}

/** The summaries of `files`, in their order. Problems with a file are RecordingFileErrors naming it. */
export async function summarizeFiles(files: readonly string[], opts: SummarizeOptions = {}): Promise<FileSummaries[]> {
  const scopes = [...(opts.scopes ?? SUMMARY_SCOPES)];
  const out: FileSummaries[] = files.map((file) => ({ file, summaries: {}, ms: 0, from: 'stored', findings: false, stored: true }));
  const toBuild: number[] = [];
  let done = 0;
  files.forEach((file, n) => {
    const stored = opts.force ? null : readStored(file, scopes, opts.findings ?? false);
    if (stored) {
      out[n]!.summaries = stored;
      out[n]!.ms = Object.values(stored).reduce((sum, x) => sum + x.ms, 0);
      out[n]!.findings = Object.values(stored).every((x) => Boolean(x.findings));
      opts.onFile?.(++done, files.length);
    } else toBuild.push(n);
  });
  const workers = Math.min(opts.workers ?? os.availableParallelism(), toBuild.length);
  const built = (n: number, list: Built[]) => {
    const entry = out[n]!;
    entry.from = 'built';
    entry.findings = opts.findings ?? false;
    entry.stored = false;
    for (const b of list) {
      entry.ms += b.ms;
      Object.defineProperty(entry.summaries, b.scope, { get: b.summary, enumerable: true, configurable: true });
    }
    if (opts.store) store(entry, list);
    opts.onFile?.(++done, files.length);
  };
  if (workers === 0) {
    const pool = new ColumnPool();
    for (const n of toBuild) built(n, buildRankSummaries(files[n]!, scopes, 0, pool, opts.findings ?? false).map(builtHere));
  } else {
    await buildOnWorkers(
      toBuild.map((n) => ({ n, file: files[n]!, scopes, findings: opts.findings ?? false })),
      workers,
      built,
    );
  }
  return out;
}

/** The stored summaries of every scope asked, when each is current (and, with `findings`, holds its findings); else null. */
function readStored(file: string, scopes: SummaryScope[], findings: boolean): FileSummaries['summaries'] | null {
  const db = openRecording(file, { readonly: true });
  try {
    const found: FileSummaries['summaries'] = {};
    for (const scope of scopes) {
      const json = readRankSummary(db, scope);
      if (json === null) return null;
      // The file's name as given now (it may have moved since).
      found[scope] = { ...(JSON.parse(json) as RankSummary), file };
      if (findings && !found[scope].findings) return null;
    }
    return found;
  } finally {
    db.close();
  }
}

/** A summary just built: its scope and time, itself, and its JSON (as a worker wrote it, or written when first asked). */
interface Built {
  scope: SummaryScope;
  ms: number;
  summary: () => RankSummary;
  json: () => string;
}

function builtHere(summary: RankSummary): Built {
  return { scope: summary.scope, ms: summary.ms, summary: () => summary, json: () => JSON.stringify(summary) };
}

/** A summary a worker built, as JSON: parsed when first read. */
function builtOnWorker(json: string, scope: SummaryScope, ms: number): Built {
  let parsed: RankSummary | undefined;
  return { scope, ms, summary: () => (parsed ??= JSON.parse(json) as RankSummary), json: () => json };
}

function store(entry: FileSummaries, list: Built[]): void {
  let db;
  try {
    db = openRecording(entry.file);
  } catch (err) {
    entry.notStoredBecause = err instanceof Error ? err.message : String(err);
    return;
  }
  try {
    writeRankSummaries(db, Object.fromEntries(list.map((b) => [b.scope, b.json()])));
    entry.stored = true;
  } catch (err) {
    // A read-only file or file system, a full disk: the summary is still this run's.
    entry.notStoredBecause = (err as Error).message;
  } finally {
    db.close();
  }
}

/** Each worker builds the next recording not yet taken. */
async function buildOnWorkers(requests: SummaryRequest[], count: number, built: (n: number, list: Built[]) => void): Promise<void> {
  const byN = new Map(requests.map((r) => [r.n, r]));
  await runOnWorkers('a summary worker', workerEntry('summary-worker', import.meta.url), requests, count, (m: SummaryAnswer) => {
    if (!m.ok) throw m.file !== undefined && m.problem !== undefined ? new RecordingFileError(m.file, m.problem) : new Error(m.error);
    const { scopes } = byN.get(m.n)!;
    built(
      m.n,
      m.json.map((j, k) => builtOnWorker(j, scopes[k]!, m.ms[k]!)),
    );
  });
}
