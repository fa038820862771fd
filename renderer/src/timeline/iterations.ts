// The iterations row: one box per instance of the repeating NVTX range
// (api.iterations(id, null): a training step, a loop iteration) over the GPU
// work it launched, warm-up instances hatched and outliers in the warning
// colour; a click makes that instance the analysis scope. Here: the track
// the row is drawn from — built once when the answer arrives, so drawing
// allocates nothing per box — and its tooltip text. Drawing and hit testing
// are draw.ts's, from the same spans.
import type { IterationRow, Iterations } from '../../../profiler/contract/api.ts';
import { formatTimestamp } from '../base/time.ts';
import { formatDuration } from '../../../profiler/contract/time.ts';

/** The row's id in a recording of one process; in a job, each rank's row is `iterations:<pid>` (iterationsRowId). */
export const ITERATIONS_ROW = 'iterations';

/** The iterations row of process `pid`: ITERATIONS_ROW where one process has instances, else one row per process. */
export function iterationsRowId(pid: number, perProcess: boolean): string {
  return perProcess ? `${ITERATIONS_ROW}:${pid}` : ITERATIONS_ROW;
}

/** IterationTrack.flags bits. */
export const WARM_UP = 1;
export const OUTLIER = 2;

/** One process's instances: a row of the timeline, in that process's group. */
export interface IterationLane {
  pid: number;
  rowId: string;
  /** Its instances' indices in the track, in start order. */
  instances: Int32Array;
}

export interface IterationTrack {
  /** The range's name ('step'): the scope a click picks is `{ kind: 'range', name, instance }`. */
  name: string;
  rows: IterationRow[];
  medianNs: number;
  /** Drawn span per instance: its GPU work, or the range on the host where it launched none. */
  startNs: Float64Array;
  endNs: Float64Array;
  flags: Uint8Array;
  /**
   * Box labels, made once: `#3` and, where it fits, `#1 warm-up` — in a
   * job, the rank's own step (IterationRow.step), since its row holds its
   * steps alone; in a recording of one process, the instance.
   */
  short: string[];
  long: string[];
  /**
   * Where each box's label must end: its own end, or the start of the next
   * box of its row where that box starts inside it (boxes are GPU spans,
   * and one step's work can still run when the next one's starts; the
   * next box is drawn over it from there). Labels then never print over
   * each other.
   */
  labelEndNs: Float64Array;
  /**
   * A row per process with instances, in the order of their first: in a
   * job the ranks' steps run at the same time, and one row of all of them
   * drew every rank's step over the others' under the first rank's name.
   */
  lanes: IterationLane[];
  /** Index in lanes of each instance. */
  laneOf: Int32Array;
  /** Whether the instances' top findings were looked for (Iterations.findings): the timeline's row is asked without. */
  findings: boolean;
}

export function iterationTrack(it: Iterations): IterationTrack | null {
  const n = it.rows.length;
  if (n === 0) return null;
  const byPid = new Map<number, number[]>();
  it.rows.forEach((r, i) => byPid.set(r.pid, [...(byPid.get(r.pid) ?? []), i]));
  const perProcess = byPid.size > 1;
  const t: IterationTrack = {
    name: it.name,
    rows: it.rows,
    medianNs: it.medianNs,
    startNs: new Float64Array(n),
    endNs: new Float64Array(n),
    flags: new Uint8Array(n),
    short: [],
    long: [],
    labelEndNs: new Float64Array(n),
    lanes: [...byPid].map(([pid, list]) => ({ pid, rowId: iterationsRowId(pid, perProcess), instances: Int32Array.from(list) })),
    laneOf: new Int32Array(n),
    findings: it.findings,
  };
  t.lanes.forEach((lane, k) => lane.instances.forEach((i) => (t.laneOf[i] = k)));
  it.rows.forEach((r, i) => {
    t.startNs[i] = r.gpuStartNs ?? r.startNs;
    t.endNs[i] = r.gpuEndNs ?? r.endNs;
    t.flags[i] = (r.warmUp ? WARM_UP : 0) | (r.outlier ? OUTLIER : 0);
    const k = perProcess ? r.step : r.instance;
    t.short.push(`#${k}`);
    t.long.push(`#${k}${r.warmUp ? ' warm-up' : ''}${r.outlier ? ' outlier' : ''}`);
  });
  for (const { instances } of t.lanes) {
    for (let x = 0; x < instances.length; x++) {
      const i = instances[x]!;
      const next = instances[x + 1];
      t.labelEndNs[i] = next !== undefined ? Math.max(t.startNs[i]!, Math.min(t.endNs[i]!, t.startNs[next]!)) : t.endNs[i]!;
    }
  }
  return t;
}

/** Space kept between a box's edge and its label's text, each side (px). */
export const LABEL_PAD = 3;

/** Labels' widths in the font drawn (draw.ts measures each once). */
export interface LabelWidths {
  long(i: number): number;
  short(i: number): number;
}

/**
 * Instance `i`'s label as drawn at `xOf` on a canvas `width` px wide: the
 * long one, else the short one, where it fits whole in the box's part that
 * is on screen and before the next box (labelEndNs) — none otherwise, as
 * Perfetto leaves a slice too narrow for its name unnamed ("#…" would
 * name no instance). Its text starts at x.
 */
export function iterationLabel(
  t: IterationTrack,
  i: number,
  xOf: (ns: number) => number,
  width: number,
  widths: LabelWidths,
): { text: string; x: number } | null {
  const left = Math.max(xOf(t.startNs[i]!), 0);
  const room = Math.min(xOf(t.labelEndNs[i]!), width) - left - 2 * LABEL_PAD;
  if (!(room > 0)) return null;
  const text = widths.long(i) <= room ? t.long[i]! : widths.short(i) <= room ? t.short[i]! : null;
  return text === null ? null : { text, x: left + LABEL_PAD };
}

/** A row's label's second part: "'step' × 12 · median 13.6 ms" (its process's instances; the median is the recording's). */
export function iterationsDetail(t: IterationTrack, lane: IterationLane): string {
  return `'${t.name}' × ${lane.instances.length} · median ${formatDuration(t.medianNs)}`;
}

/** Tooltip of instance `i`: its spans, work per GPU, worst finding and flags. */
export function describeIteration(t: IterationTrack, i: number): { title: string; lines: string[] } {
  const r = t.rows[i]!;
  const lines: string[] = [];
  if (r.warmUp) lines.push('warm-up: slower than the instances after it (JIT, library initialisation, allocator growth)');
  if (r.outlier) lines.push(`outlier: ${(r.lengthNs / Math.max(1, t.medianNs)).toFixed(2)}× the median ${formatDuration(t.medianNs)}`);
  lines.push(
    r.gpuStartNs !== null && r.gpuEndNs !== null
      ? `GPU span ${formatDuration(r.gpuEndNs - r.gpuStartNs)} (${formatTimestamp(r.gpuStartNs, 1000)} – ${formatTimestamp(r.gpuEndNs, 1000)})`
      : 'no GPU work launched',
  );
  lines.push(`range on the host ${formatDuration(r.endNs - r.startNs)} · ${r.operations.toLocaleString('en-US')} GPU operations`);
  // d.gpu: the CUDA ordinal (base/gpus.ts).
  for (const d of r.devices) lines.push(`GPU ${d.gpu}: busy ${formatDuration(d.busyNs)}${d.overlap !== null ? `, overlap ${d.overlap.toFixed(2)}×` : ''}`);
  if (r.topFinding) lines.push(`top finding: ${r.topFinding.title} (${formatDuration(r.topFinding.costNs)})`);
  else if (!t.findings) lines.push("its top finding: the Stats tab's iterations table");
  lines.push('click: analyse this instance alone');
  // In a job: the rank's step, and the instance a click analyses (report --range NAME#k).
  const lane = t.lanes[t.laneOf[i]!]!;
  const title =
    t.lanes.length > 1
      ? `${t.name} #${r.step} of ${lane.instances.length}, ${r.rank !== null ? `rank ${r.rank}` : `pid ${r.pid}`}${r.host ? ` (${r.host})` : ''} · #${r.instance} of the ${t.rows.length} in the recording`
      : `${t.name} #${r.instance} of ${t.rows.length}`;
  return { title, lines };
}
