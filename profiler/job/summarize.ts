// The summaries of a job's recordings (summary.ts): each taken from its
// recording where it is current (store/rank-summary.ts), else built — on
// worker threads, one recording at a time each (summary-worker.ts), or here
// with the loader's threads — and, for `streamscope summarize`, stored in
// the recording, so that the next analysis of the job reads a row per rank.
// A recording that cannot be written keeps no summary: it is summarized
// again each time, which the answer says. With `findings`, each summary
// holds its rank's top findings (summary.ts TopFindings): a stored one
// without them is built again.
//
// The recordings of a job summarized together have their steady state cut
// where the job's start-up ends (job-cut.ts), as the analysis of their
// merged recording cuts it, not where each rank's own ends: the ranks whose
// own cut is not the job's have their steady state built again with it
// (cutWhereTheJobStarts). A job's report does the same for itself where
// the stored summaries are the recorders' (each rank's own cut) or were cut
// for another job (a subset of this job's ranks), without storing them;
// those stored by `summarize` of the job's files are read as they are.
import os from 'node:os';
import { runOnWorkers, workerEntry } from '../base/worker-pool.ts';
import { ColumnPool } from '../native/addon.ts';
import { openRecording } from '../store/database.ts';
import { RecordingFileError } from '../store/recording-error.ts';
import { readCurrentSummaries, readRankSummary, STEPS_ROW, writeRankSummaries } from '../store/rank-summary.ts';
import { jobStartupOfFiles } from './job-cut.ts';
import { cutForJob, jobOf, placeSummaries } from './of-summaries.ts';
import {
  buildRankSummaries,
  headOf,
  storedForms,
  storedSummary,
  SUMMARY_SCOPES,
  type JobCut,
  type RankSummary,
  type SummaryHead,
  type SummaryScope,
} from './summary.ts';
import type { Iterations } from '../contract/iterations.ts';
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
  /** By scope, what cutting the job's steady state reads of each (summary.ts SummaryHead): a built one is not parsed for it. */
  heads: Partial<Record<SummaryScope, SummaryHead>>;
  /** Milliseconds spent building them (stored: when they were built). */
  ms: number;
  /** Read from the recording (current), or built now. */
  from: 'stored' | 'built';
  /** Whether its summaries hold the rank's top findings (built with `findings`, or stored with them). */
  findings: boolean;
  /** For a built one with `store`: whether it was written into the recording, and if not, why. */
  stored: boolean;
  /**
   * Its current summary's steady state (the recorder's, cut where its own rank's start-up ended) built again now, cut
   * where the job's ended (`from` is then 'built'): what `summarize` of the job's files stores, and a report does for
   * itself where they were not.
   */
  recut: boolean;
  notStoredBecause?: string;
}

/** The summaries of `files`, in their order. Problems with a file are RecordingFileErrors naming it. */
export async function summarizeFiles(files: readonly string[], opts: SummarizeOptions = {}): Promise<FileSummaries[]> {
  const scopes = [...(opts.scopes ?? SUMMARY_SCOPES)];
  const out: FileSummaries[] = files.map((file) => ({ file, summaries: {}, heads: {}, ms: 0, from: 'stored', findings: false, stored: true, recut: false }));
  const toBuild: number[] = [];
  let done = 0;
  files.forEach((file, n) => {
    const stored = opts.force ? null : readStored(file, scopes, opts.findings ?? false);
    if (stored) {
      out[n]!.summaries = stored;
      for (const [scope, summary] of Object.entries(stored)) out[n]!.heads[scope as SummaryScope] = headOf(summary);
      out[n]!.ms = Object.values(stored).reduce((sum, x) => sum + x.ms, 0);
      out[n]!.findings = Object.values(stored).every((x) => Boolean(x.findings));
      opts.onFile?.(++done, files.length);
    } else toBuild.push(n);
  });
  const workers = Math.min(opts.workers ?? os.availableParallelism(), toBuild.length);
  const built = (n: number, list: Built[], steps: string) => {
    const entry = out[n]!;
    entry.from = 'built';
    entry.findings = opts.findings ?? false;
    entry.stored = false;
    for (const b of list) {
      entry.ms += b.ms;
      entry.heads[b.scope] = b.head;
      Object.defineProperty(entry.summaries, b.scope, { get: b.summary, enumerable: true, configurable: true });
    }
    if (opts.store) store(entry, list, steps);
    opts.onFile?.(++done, files.length);
  };
  await build(
    toBuild.map((n) => ({ n, file: files[n]!, scopes, findings: opts.findings ?? false })),
    workers,
    built,
  );
  if (scopes.includes('steady-state')) {
    // Every rank cut where the job's start-up ended, as the merged recording is, a report's too: the recorder stores
    // each rank's summary cut where its own start-up ended, and the ranks' overlap differed from the merged file's by up
    // to 19.5 points (the four-rank DDP job). A report does not store what it cut (read-only use: it says so, and that
    // `summarize` of the job's files keeps them). A job none of whose ranks has a start-up of its own is taken to have
    // none (the steady state of each is its whole recording), as a real one never is: a CUDA process's start-up begins
    // with its context, before any of its work. Not finding the job's saves reading every rank again (the generated
    // 64-rank job: 1.1 s of 5.5 s).
    const heads = out.map((e) => e.heads['steady-state']!);
    const job = jobOf(heads);
    const cutForAnotherJob = heads.some((h) => h.jobCut !== undefined && !cutForJob(h, job));
    const startups = heads.some((h) => h.startup !== null);
    if ((startups && files.length > 1) || cutForAnotherJob) await cutWhereTheJobStarts(out, opts);
  }
  return out;
}

/** Builds the summaries `requests` ask for, on `workers` threads (0: here, with every core). */
async function build(requests: SummaryRequest[], workers: number, built: (n: number, list: Built[], steps: string) => void): Promise<void> {
  if (workers > 0) return buildOnWorkers(requests, workers, built);
  const pool = new ColumnPool();
  for (const r of requests) {
    const summaries = buildRankSummaries(r.file, r.scopes, 0, pool, r.findings, r.jobCut);
    const forms = summaries.map(storedForms);
    built(
      r.n,
      summaries.map((summary, k) => ({ scope: summary.scope, ms: summary.ms, head: headOf(summary), summary: () => summary, json: () => forms[k]!.json })),
      forms[0]!.steps,
    );
  }
}

/**
 * Every recording's steady state cut where the job's start-up ends, as the analysis of their merged recording cuts it
 * (job-cut.ts, the recordings placed as merge places them): a summary already cut for this job (the same recordings, by
 * fingerprint: of-summaries.ts jobOf) is kept; one whose own cut selects the same rows (neither the job nor the rank has a
 * start-up) is only marked; the others' steady state is built again with the job's start-up, and stored where the
 * summaries are.
 */
async function cutWhereTheJobStarts(out: FileSummaries[], opts: SummarizeOptions): Promise<void> {
  const steady = out.map((e) => e.summaries['steady-state']!);
  const job = jobOf(steady);
  if (steady.every((s) => cutForJob(s, job))) return;
  let placement: ReturnType<typeof placeSummaries>;
  try {
    placement = placeSummaries(steady);
  } catch (err) {
    // Not one job (the same recording twice): each keeps its own cut, and a job's report of them says why it refuses.
    if (err instanceof RecordingFileError) return;
    throw err;
  }
  const startup = jobStartupOfFiles(out.map((e, i) => ({ file: e.file, shift: placement.shifts[i]!, correctionNs: placement.alignment[i]!.correctionNs })));
  const again: SummaryRequest[] = [];
  out.forEach((entry, n) => {
    const s = steady[n]!;
    if (cutForJob(s, job)) return;
    const shift = placement.shifts[n]!;
    const cut: JobCut = { startup: startup && { ...startup, startNs: startup.startNs - shift, endNs: startup.endNs - shift, ops: 0 }, job };
    if (cut.startup === null && s.startup === null) {
      // The same rows either way (the whole recording's): marked as the job's.
      s.jobCut = { job };
      entry.heads['steady-state'] = headOf(s);
      if (opts.store) {
        const { json, steps } = storedForms(s);
        store(entry, [{ scope: s.scope, ms: s.ms, head: headOf(s), summary: () => s, json: () => json }], steps);
      }
    } else again.push({ n, file: entry.file, scopes: ['steady-state'], findings: entry.findings, jobCut: cut });
  });
  const workers = Math.min(opts.workers ?? os.availableParallelism(), again.length);
  await build(again, workers, (n, [b], steps) => {
    const entry = out[n]!;
    if (entry.from === 'stored') entry.recut = true;
    entry.from = 'built';
    entry.stored = false;
    entry.ms += b!.ms;
    entry.heads['steady-state'] = b!.head;
    Object.defineProperty(entry.summaries, 'steady-state', { get: b!.summary, enumerable: true, configurable: true });
    if (opts.store) store(entry, [b!], steps);
  });
}

/**
 * The stored summaries of every scope asked, when each is current (and, with `findings`, holds its findings); else null.
 * Their steps are read from the recording when first asked (readSteps), once for every scope.
 */
function readStored(file: string, scopes: SummaryScope[], findings: boolean): FileSummaries['summaries'] | null {
  const db = openRecording(file, { readonly: true });
  try {
    // Its steps current too (their payload left unread): else `summarize` would keep summaries whose steps cannot be read.
    const current = readCurrentSummaries(db, scopes, [STEPS_ROW]);
    if (current === null) return null;
    const { payloads, fingerprint } = current;
    const found: FileSummaries['summaries'] = {};
    let steps: Iterations | null | undefined;
    const iterations = () => (steps === undefined ? (steps = readSteps(file)) : steps);
    for (const [k, scope] of scopes.entries()) {
      const summary = storedSummary(payloads[k]!, iterations);
      // The file's name as given now (it may have moved since), and which recording it is.
      summary.file = file;
      summary.fingerprint = fingerprint;
      if (findings && !summary.findings) return null;
      found[scope] = summary;
    }
    return found;
  } finally {
    db.close();
  }
}

/** A stored summary's steps (STEPS_ROW), read when asked: a RecordingFileError where they are damaged, or the recording changed since its summary was read. */
function readSteps(file: string): Iterations | null {
  const db = openRecording(file, { readonly: true });
  try {
    const json = readRankSummary(db, STEPS_ROW);
    if (json === null) throw new RecordingFileError(file, `changed since its summary was read (its steps are not current): streamscope summarize ${file}`);
    try {
      return JSON.parse(json) as Iterations | null;
    } catch {
      throw new RecordingFileError(
        file,
        `has damaged steps in its summary (rank_summary '${STEPS_ROW}'): streamscope summarize --force ${file} builds them again`,
      );
    }
  } finally {
    db.close();
  }
}

/** A summary just built: its scope, time and head, itself, and its JSON (as a worker wrote it, or written when first asked). */
interface Built {
  scope: SummaryScope;
  ms: number;
  head: SummaryHead;
  summary: () => RankSummary;
  json: () => string;
}

/** A summary a worker built, as stored (without its steps: `steps`, the JSON of every scope's), parsed when first read. */
function builtOnWorker(json: string, scope: SummaryScope, ms: number, head: SummaryHead, steps: () => Iterations | null): Built {
  let parsed: RankSummary | undefined;
  return { scope, ms, head, summary: () => (parsed ??= storedSummary(json, steps)), json: () => json };
}

/** Stores a recording's summaries and their steps (`steps`: JSON, STEPS_ROW). */
function store(entry: FileSummaries, list: Built[], steps: string): void {
  let db;
  try {
    db = openRecording(entry.file);
  } catch (err) {
    entry.notStoredBecause = err instanceof Error ? err.message : String(err);
    return;
  }
  try {
    writeRankSummaries(db, { ...Object.fromEntries(list.map((b) => [b.scope, b.json()])), [STEPS_ROW]: steps });
    entry.stored = true;
  } catch (err) {
    // A read-only file or file system, a full disk: the summary is still this run's.
    entry.notStoredBecause = (err as Error).message;
  } finally {
    db.close();
  }
}

/** Each worker builds the next recording not yet taken. */
async function buildOnWorkers(requests: SummaryRequest[], count: number, built: (n: number, list: Built[], steps: string) => void): Promise<void> {
  const byN = new Map(requests.map((r) => [r.n, r]));
  await runOnWorkers('a summary worker', workerEntry('summary-worker', import.meta.url), requests, count, (m: SummaryAnswer) => {
    if (!m.ok) throw m.file !== undefined && m.problem !== undefined ? new RecordingFileError(m.file, m.problem) : new Error(m.error);
    const { scopes } = byN.get(m.n)!;
    let steps: Iterations | null | undefined;
    const parseSteps = () => (steps === undefined ? (steps = JSON.parse(m.steps) as Iterations | null) : steps);
    built(
      m.n,
      m.json.map((j, k) => builtOnWorker(j, scopes[k]!, m.ms[k]!, m.heads[k]!, parseSteps)),
      m.steps,
    );
  });
}
