// A rank's summary (issue 29): what the analysis of a job needs of one
// recording, computed from that recording alone, where it is (on the node
// that ran the rank, or here on worker threads: summarize.ts), and kept in
// it (store/rank-summary.ts). A job of many ranks is then analysed from its
// ranks' summaries (of-summaries.ts): a few kB each, where the rows are
// millions.
//
// A summary is the job analysis's own reading of the recording's parts
// (analysis/diagnosis/job.ts PartReader: per process and GPU the busy
// times by role, the NCCL kernels, the serialized-collective candidates,
// the GPU span), for one scope, in the recording's own ids and clock; with
// what placing it among the others needs: its collectives' end times (clock
// alignment, merge/align.ts), its origin and host, and its ids as the merge
// plans them (merge/input-facts.ts: pids, devices, strings, id ranges).
// Names are kept only for the strings the parts refer to. And its
// iterations (iterations.ts): the steps of its repeating NVTX range, each
// with its breakdown per GPU, the same in every scope. And, where asked
// (`summarize --findings`, the recorder's summary at a rank's end), its top
// findings: the rank's own diagnosis for the scope, as `report FILE` lists
// them (its steady state cut where the summary's is) — about 4x the rest of
// a summary's cost, so not by default.
//
// Scopes: the whole recording, and its steady state. A merged recording of
// the same ranks cuts the steady state once for the whole job
// (job-scope.ts): a rank summarized on its own is cut where its own
// start-up ends; summarized with the other ranks of its job (`summarize
// FILE…`: summarize.ts), where the job's does (job-cut.ts, `jobCut`), as
// the merged recording's analysis cuts it.
import type { ProcessFacts } from '../analysis/communication.ts';
import { jobStartup, callsSpan } from '../analysis/job-scope.ts';
import { selectScope } from '../analysis/scope.ts';
import { readTraceTables, type DeviceRow, type StreamRow } from '../analysis/trace.ts';
import { mergeNccl, planJob, PartReader, type JobPart, type PartResult } from '../analysis/diagnosis/job.ts';
import { readProcessFacts } from '../analysis/communication.ts';
import { analyze } from '../analysis/diagnosis/analyze.ts';
import type { TimelineColumns } from '../native/columns.ts';
import type { Finding } from '../contract/findings.ts';
import { RANK_TOP_FINDINGS } from '../contract/job.ts';
import { pickIterationRange } from '../analysis/diagnosis/iterations.ts';
import type { Iterations } from '../contract/iterations.ts';
import type { RankedProcess } from '../contract/ranks.ts';
import type { Scope, ScopeInfo, Startup } from '../contract/scope.ts';
import type { Ns } from '../contract/time.ts';
import type { RankCollectives } from '../merge/align.ts';
import { collectivesOfKernels, readCollectives } from '../merge/collectives.ts';
import { readInputFacts } from '../merge/input-facts.ts';
import { ColumnPool } from '../native/addon.ts';
import type { InputFacts } from '../merge/plan.ts';
import { openRecording, type Db } from '../store/database.ts';
import { readProcesses } from '../store/ranks.ts';
import { rowsAtMost, timelineRows } from '../store/row-bounds.ts';
import { RecordingFileError } from '../store/recording-error.ts';
import { recordingFingerprint, SUMMARY_FORMAT } from '../store/rank-summary.ts';
import { beforeOriginNs } from '../store/zones.ts';
import { RankSteps } from './iterations.ts';

/** The scopes a summary is kept for. */
export const SUMMARY_SCOPES = ['whole', 'steady-state'] as const;
export type SummaryScope = (typeof SUMMARY_SCOPES)[number];

/** A part's result as JSON holds it: the NCCL kernels' columns as arrays. */
export type SummaryPart = Omit<PartResult, 'nccl' | 'ms'> & { nccl: Record<keyof Omit<PartResult['nccl'], 'length'>, number[]> };

export interface RankSummary {
  format: number;
  /** The recording, as named when summarized. */
  file: string;
  scope: SummaryScope;
  /** meta origin_ns (an integer too large for a double: as text) and host. */
  origin: string;
  /** Where its first row starts before its origin (store/zones.ts beforeOriginNs; a recorded launcher): ns, < 0; absent where none does. */
  beforeOriginNs?: Ns;
  host: string | null;
  meta: Record<string, string>;
  /** Its ids as the merge plans them; strings only those the parts name, and the demangled forms of those. */
  facts: InputFacts;
  demangled: [number, string][];
  devices: DeviceRow[];
  streams: StreamRow[];
  processes: ProcessFacts[];
  ranked: RankedProcess[];
  /** Each rank's (process and GPU's) collectives: key → end (merge/collectives.ts), as entries. */
  collectives: [string, [string, number][]][];
  /** The scope as the recording's own analysis says it (windows closed on its span), its start-up, and the span of its calls in the scope. */
  info: ScopeInfo;
  startup: Startup | null;
  callsSpan: { start: Ns; end: Ns } | null;
  parts: SummaryPart[];
  /**
   * Its repeating NVTX range's instances (pickIterationRange: the user's step range before NCCL's), as `report --iterations`
   * gives them without findings, each with its breakdown per GPU over its own GPU span; in its own ids and clock, whatever
   * the scope. Null where no range repeats. Stored apart from the scopes (store/rank-summary.ts STEPS_ROW): a stored
   * summary reads them from its recording when first asked (summarize.ts readStored).
   */
  readonly iterations: Iterations | null;
  /**
   * The rank's own top findings for the scope: its diagnosis (analyze(), what-ifs included), the worst RANK_TOP_FINDINGS as
   * `report FILE --json` lists them, in its own ids, clock and words. Absent or null where not computed (a plain
   * `summarize`): a summary stored without them is not current for a `--findings` ask (summarize.ts).
   */
  findings?: TopFindings | null;
  /** Milliseconds spent reading and analysing it. */
  ms: number;
  /** The recording's fingerprint (store/rank-summary.ts recordingFingerprint) as it was summarized, or as its stored summary was read: which recording it is. */
  fingerprint?: string;
  /** A steady state cut where the job's start-up ends (`startup` is the job's, in this recording's clock): of the job of these recordings (their fingerprints, sorted: of-summaries.ts jobOf). */
  jobCut?: { job: string[] };
}

/** What summarize.ts reads of a summary to cut its job's steady state (without parsing the rest: ~1.4 MB at 1 M operations). */
export type SummaryHead = Pick<RankSummary, 'fingerprint' | 'startup' | 'jobCut'>;
export const headOf = ({ fingerprint, startup, jobCut }: RankSummary): SummaryHead => ({ fingerprint, startup, ...(jobCut ? { jobCut } : {}) });

/** The steady state of a rank of a job, cut where the job's start-up ends (job-cut.ts jobStartupOfFiles). */
export interface JobCut {
  /** The job's start-up in this rank's clock (its `ops` counted again here); null: the job has none. */
  startup: Startup | null;
  /** The job: its recordings' fingerprints, sorted (of-summaries.ts jobOf). */
  job: string[];
}

/** A summary as stored: its scope's JSON without the steps, and the steps' JSON (the same for every scope: STEPS_ROW). */
export function storedForms(summary: RankSummary): { json: string; steps: string } {
  return { json: JSON.stringify({ ...summary, iterations: undefined }), steps: JSON.stringify(summary.iterations) };
}

/**
 * A summary from its stored forms (storedForms): its scope's JSON, and what gives its steps when first read — a getter,
 * so that a summary read for a job's report never reads them (store/rank-summary.ts STEPS_ROW). `steps` is called at
 * each read: the caller keeps what it gave (one recording's scopes share their steps).
 */
export function storedSummary(json: string, steps: () => Iterations | null): RankSummary {
  const summary = JSON.parse(json) as RankSummary;
  Object.defineProperty(summary, 'iterations', { get: steps, enumerable: true, configurable: true });
  return summary;
}

export interface TopFindings {
  /** The worst RANK_TOP_FINDINGS at most, worst first. */
  top: Finding[];
  /** How many the diagnosis found in all. */
  total: number;
}

/** The summary of `file` for `scope` (buildRankSummaries, one scope). */
export function buildRankSummary(file: string, scope: SummaryScope, threads = 0, withFindings = false): RankSummary {
  return buildRankSummaries(file, [scope], threads, undefined, withFindings)[0]!;
}

/**
 * The summaries of `file` for `scopes`, read with the loader's `threads` (0:
 * every core) into `pool`'s columns: what does not depend on the scope (the
 * tables, the parts, start-up, the ids, the collectives) read once. A
 * merged recording is refused: a job is summarized rank by rank, from the
 * ranks' own files. Summarizing many, give each the same pool: fresh memory
 * for a rank's columns (~60 MB for 1 M operations) costs more to touch than
 * memory a rank before used. `withFindings`: each scope's top findings too (topFindings). `jobCut`: the steady state cut
 * where the job's start-up ends, not where the recording's own does.
 */
export function buildRankSummaries(
  file: string,
  scopes: readonly SummaryScope[],
  threads = 0,
  pool = new ColumnPool(),
  withFindings = false,
  jobCut?: JobCut,
): RankSummary[] {
  const t0 = performance.now();
  const db = openRecording(file, { readonly: true });
  let reader: PartReader | null = null;
  try {
    const tables = readTraceTables(db);
    const originText = tables.meta.get('origin_ns');
    if (!originText || !/^-?\d+$/.test(originText))
      throw new RecordingFileError(file, 'has no origin_ns in its meta: its times cannot be placed beside the other ranks');
    const plan = planJob(db);
    if (plan.merged)
      throw new RecordingFileError(file, 'is a merged job: summarize the recordings of its ranks (a job is summarized rank by rank, each from its own file)');
    const found = jobStartup(db, db.name, tables.meta, tables.strings, { pool }).startup;
    const facts = readInputFacts(db);
    const before = beforeOriginNs(db);
    const processFacts = readProcessFacts(db);
    const common = {
      format: SUMMARY_FORMAT,
      file,
      origin: originText,
      ...(before < 0 ? { beforeOriginNs: before } : {}),
      host: tables.meta.get('host') ?? null,
      meta: Object.fromEntries(tables.meta),
      devices: tables.devices,
      streams: tables.streams,
      processes: [...processFacts.values()],
      ranked: readProcesses(db),
      fingerprint: recordingFingerprint(db),
    };
    reader = new PartReader(file, threads, pool, { db, tables, processes: processFacts });
    // Part by part, every scope of a part after the other: the reader keeps
    // the part's rows loaded for the next scope (the steady state is a slice
    // of the whole's rows). What is read once counts in the first scope's time.
    const ms = scopes.map(() => 0);
    ms[0] = performance.now() - t0;
    const asked = scopes.map((scope): Scope => ({ kind: scope }));
    const startups = scopes.map((scope) => (scope === 'steady-state' && jobCut ? jobCut.startup && { ...jobCut.startup } : found && { ...found }));
    const infos = scopes.map((_, k) => selectScope(db, file, asked[k]!, { ops: { length: 0 } as never, calls: { length: 0 } as never }, startups[k]!).info);
    const results = scopes.map((): PartResult[] => []);
    // A recording of several parts (one recorder's ranks on a node) diagnosed for its findings: the diagnosis loads
    // every row, and each part's are then taken from those (PartReader.readFrom) rather than read from the file again.
    // One part: the diagnosis takes the part's rows after the parts (allRows, below).
    let findings: TopFindings[] | null = null;
    if (withFindings && plan.parts.length > 1) {
      const diagnosed = topFindings(db, file, asked, startups, ms, undefined, jobCut);
      findings = diagnosed.findings;
      if (diagnosed.columns) reader.readFrom(diagnosed.columns);
    }
    // The steps first, part by part: they read the part's calls, and the scopes' reads take the same load.
    const stepRange = pickIterationRange(db);
    const steps = stepRange === null ? null : new RankSteps(db, stepRange, tables, processFacts);
    for (const part of plan.parts) {
      if (steps) {
        const t = performance.now();
        steps.addPart(part, reader);
        ms[0]! += performance.now() - t;
      }
      scopes.forEach((_, k) => {
        const t = performance.now();
        results[k]!.push(reader!.read({ part, scope: asked[k]!, startup: startups[k]! }));
        ms[k]! += performance.now() - t;
      });
    }
    const t = performance.now();
    const whole = scopes.indexOf('whole');
    const collectives = [...(whole >= 0 ? collectivesOfParts(db, results[whole]!) : readCollectives(db))].map(([rank, keys]): [string, [string, number][]] => [
      rank,
      [...keys],
    ]);
    const iterations = steps?.done() ?? null;
    ms[0] += performance.now() - t;
    // After the parts. A recording of one part whose rows the reader loaded every one of (operations and calls) is the
    // diagnosis's load already: its columns are handed over rather than read a second time (0.2 s of a 1 M-operation
    // rank). Else the diagnosis loads its own (the reader's pool holds no column it needs).
    if (withFindings && !findings)
      findings = topFindings(db, file, asked, startups, ms, plan.parts.length === 1 ? allRows(db, reader, plan.parts[0]!) : undefined, jobCut).findings;
    return scopes.map((scope, k) => {
      const t = performance.now();
      const startup = startups[k]!;
      if (startup) startup.ops = results[k]!.reduce((n, r) => n + r.opsBeforeCut, 0);
      const named = new Set<number>();
      for (const r of results[k]!) {
        for (const c of r.communication.kernels) named.add(c.nameId);
        for (let i = 0; i < r.nccl.length; i++) named.add(r.nccl.detail[i]!);
      }
      const summary: RankSummary = {
        ...common,
        collectives,
        scope,
        facts: { ...facts, strings: facts.strings.filter(([id]) => named.has(id)) },
        demangled: [...tables.demangled].filter(([id]) => named.has(id)),
        info: infos[k]!,
        startup,
        callsSpan: callsSpan(db, scope === 'steady-state' && startup ? startup.endNs : null),
        parts: results[k]!.map(toJson),
        iterations,
        ...(findings ? { findings: findings[k]! } : {}),
        ...(scope === 'steady-state' && jobCut ? { jobCut: { job: jobCut.job } } : {}),
        ms: 0,
      };
      summary.ms = ms[k]! + performance.now() - t;
      return summary;
    });
  } finally {
    reader?.close();
    db.close();
  }
}

/**
 * Each scope's top findings: the rank's diagnosis as `report FILE --scope`
 * gives it (analyze(): the rows loaded once for every scope), the worst
 * RANK_TOP_FINDINGS kept. Each scope's time is added to `ms`. The steady
 * state of a rank without start-up is its whole recording, operations and
 * calls: diagnosed once for both (half of `summarize --findings` on such a
 * rank went to the second, identical diagnosis).
 */
function topFindings(
  db: Db,
  file: string,
  scopes: readonly Scope[],
  startups: readonly (Startup | null)[],
  ms: number[],
  loaded: TimelineColumns | undefined,
  jobCut: JobCut | undefined,
): { findings: TopFindings[]; columns: TimelineColumns | undefined } {
  let columns = loaded;
  const diagnosed = new Map<string, TopFindings>();
  const findings = scopes.map((scope, k) => {
    const t = performance.now();
    const same = scope.kind === 'steady-state' && startups[k] === null ? 'whole' : scope.kind;
    let found = diagnosed.get(same);
    if (!found) {
      // The steady state cut where the summary's is: the job's start-up where it was cut for its job.
      const cut = scope.kind === 'steady-state' && jobCut ? { startup: jobCut.startup } : {};
      const analysis = analyze(db, { scope, file, columns, ...cut });
      columns = analysis.columns;
      const { findings } = analysis.diagnosis;
      diagnosed.set(same, (found = { top: findings.slice(0, RANK_TOP_FINDINGS), total: findings.length }));
    }
    ms[k]! += performance.now() - t;
    return found;
  });
  return { findings, columns };
}

/** The part's rows with their calls as the reader loads them, where they are every row of the recording's operation and call tables; else undefined. */
function allRows(db: Db, reader: PartReader, part: JobPart): TimelineColumns | undefined {
  // Whether or not the part keeps its processes' rows only (filterPids): every row loaded is every row there is.
  const columns = reader.columns(part);
  const most = timelineRows(db);
  return columns.ops.length === most.ops && columns.calls.length === most.calls ? columns : undefined;
}

/**
 * The recording's collectives (merge/collectives.ts) from the whole scope's
 * NCCL kernels, read by the parts already: where the parts loaded every
 * operation of the file (none left out by the loader, none outside the
 * processes' zones), those are all its NCCL kernels, and the kernels table
 * need not be scanned again (a scan of 800 k kernels in SQL: ~50 ms of a
 * rank's ~400). Else read by SQL.
 */
function collectivesOfParts(db: Db, whole: PartResult[]): Map<string, RankCollectives> {
  const loaded = whole.reduce((n, r) => n + r.rows.ops, 0);
  // As many loaded as the tables hold at most is every one (rowsAtMost); a table with gaps in its ids is scanned.
  return loaded === rowsAtMost(db, ['kernels', 'memcpys', 'memsets']) ? collectivesOfKernels(db, mergeNccl(whole.map((r) => r.nccl))) : readCollectives(db);
}

function toJson(r: PartResult): SummaryPart {
  const { nccl, ms: _ms, ...rest } = r;
  return {
    ...rest,
    nccl: {
      start: [...nccl.start],
      end: [...nccl.end],
      rowId: [...nccl.rowId],
      pid: [...nccl.pid],
      device: [...nccl.device],
      stream: [...nccl.stream],
      detail: [...nccl.detail],
    },
  };
}
