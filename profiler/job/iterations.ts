// A job's iterations from its ranks' summaries (issue 29): each rank's
// steps of its repeating NVTX range (the user's step range, as `report
// --iterations` picks it: analysis/diagnosis/iterations.ts), with each
// step's communication breakdown per GPU — which step of which rank waited
// in its collectives — kept in the rank's summary (rankIterations) and
// placed on the job's clock and ids as `merge` would place them
// (jobIterations), so that `report A.sqlite B.sqlite … --iterations` needs
// no row of any rank.
//
// The rows are iterationRows' (the single recording's own), computed on
// each part's columns as the summary reads them: a step owns only work of
// its own process (cuda/nvtx-ranges.ts), so a part's rows are those the
// whole recording's columns give.
import type { ProcessFacts } from '../analysis/communication.ts';
import { iterationRows, iterationsOfRows, readStepTables } from '../analysis/diagnosis/iterations.ts';
import type { JobPart, PartReader } from '../analysis/diagnosis/job.ts';
import type { TraceTables } from '../analysis/trace.ts';
import type { IterationRow, Iterations, JobIterations } from '../contract/iterations.ts';
import type { RangeInstance } from '../cuda/nvtx-ranges.ts';
import type { InputPlan } from '../merge/plan.ts';
import type { Db } from '../store/database.ts';
import { rangeInstances } from '../store/nvtx-ranges.ts';
import type { Placement } from './of-summaries.ts';
import type { RankSummary } from './summary.ts';

/** A rank's steps as its summary builds them, part by part (stepsOfPart), then as Iterations (done). */
export class RankSteps {
  readonly #db: Db;
  readonly #name: string;
  readonly #instances: RangeInstance[];
  readonly #tables: TraceTables;
  readonly #processes: Map<number, ProcessFacts>;
  readonly #rows: IterationRow[] = [];

  /** `name`: the range picked (pickIterationRange); `tables`, `processes`: the recording's, read by the summary already. */
  constructor(db: Db, name: string, tables: TraceTables, processes: Map<number, ProcessFacts>) {
    this.#db = db;
    this.#name = name;
    this.#instances = rangeInstances(db, name);
    this.#tables = tables;
    this.#processes = processes;
  }

  /**
   * The steps of `part`'s processes, on its rows with their calls (the
   * reader keeps them for the part's reads: no second load). Numbered as
   * the whole recording numbers them (`instance`: rangeInstances' order).
   */
  addPart(part: JobPart, reader: PartReader): void {
    const own: number[] = [];
    this.#instances.forEach((inst, x) => {
      if (part.pids.includes(inst.pid)) own.push(x);
    });
    if (own.length === 0) return;
    const tables = readStepTables(this.#db, part.subset, { tables: this.#tables, processes: this.#processes });
    const rows = iterationRows(
      reader.columns(part),
      own.map((x) => this.#instances[x]!),
      tables,
    );
    rows.forEach((r, k) => {
      r.instance = own[k]! + 1;
      this.#rows.push(r);
    });
  }

  done(): Iterations {
    return iterationsOfRows(
      this.#name,
      [...this.#rows].sort((a, b) => a.instance - b.instance),
      'picked',
      false,
    );
  }
}

/** A rank's row on the job's clock and ids: every time moved by its recording's shift, its pid and devices as merge plans them. */
function placeRow(r: IterationRow, plan: InputPlan, shift: number): IterationRow {
  const at = (t: number | null) => (t === null ? null : t + shift);
  return {
    ...r,
    pid: plan.pids.get(r.pid) ?? r.pid,
    startNs: r.startNs + shift,
    endNs: r.endNs + shift,
    gpuStartNs: at(r.gpuStartNs),
    gpuEndNs: at(r.gpuEndNs),
    devices: r.devices.map((d) => ({ ...d, deviceId: plan.devices.get(d.deviceId) ?? d.deviceId })),
  };
}

/**
 * The job's iterations: every rank's rows of the range most ranks picked
 * (the first recording's among equals), placed (`placement`: placeSummaries
 * of the same summaries, in the same order). A rank that picked another
 * range, or none, has no rows and is named in `without`. Numbered
 * (`instance`) as the merged recording numbers the range's instances: by
 * start, then row id — the merge gives each recording's rows ids after the
 * recording before's, in the order given. Null when no rank has a repeating
 * range.
 */
export function jobIterations(
  summaries: readonly Pick<RankSummary, 'file' | 'iterations' | 'processes'>[],
  { shifts, plans }: Pick<Placement, 'shifts' | 'plans'>,
): JobIterations | null {
  const picks = new Map<string, number>();
  for (const s of summaries) if (s.iterations) picks.set(s.iterations.name, (picks.get(s.iterations.name) ?? 0) + 1);
  let name: string | null = null;
  for (const [n, count] of picks) if (name === null || count > picks.get(name)!) name = n;
  if (name === null) return null;
  const placed: { row: IterationRow; file: number; own: number }[] = [];
  const without: JobIterations['without'] = [];
  summaries.forEach((s, i) => {
    if (s.iterations?.name !== name) {
      without.push({ file: s.file, ranks: s.processes.flatMap((p) => (p.rank === null ? [] : [p.rank])), picked: s.iterations?.name ?? null });
      return;
    }
    for (const r of s.iterations.rows) placed.push({ row: placeRow(r, plans[i]!, shifts[i]!), file: i, own: r.instance });
  });
  placed.sort((a, b) => a.row.startNs - b.row.startNs || a.file - b.file || a.own - b.own);
  const rows = placed.map(({ row }, k) => ({ ...row, instance: k + 1 }));
  return { ...iterationsOfRows(name, rows, 'picked', false), without };
}
