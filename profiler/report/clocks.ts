// How a recording's times were placed on a job's clock, in one line: by
// `merge` as it merges, and by `report` of a job's ranks from their
// summaries (profiler/job/), which places them the same way.
import type { SourceAlignment } from '../contract/job.ts';
import { formatDuration } from '../contract/time.ts';

/** ±duration, as the shift is printed. */
function signed(ns: number): string {
  return `${ns < 0 ? '−' : '+'}${formatDuration(Math.abs(ns))}`;
}

/** A correction: the duration, and to the nanosecond (what the residual is compared with). */
function correction(ns: number): string {
  return Math.abs(ns) < 1000 ? signed(ns) : `${signed(ns)} (${ns < 0 ? '−' : '+'}${Math.abs(ns).toLocaleString('en-US')} ns)`;
}

/** One line per input: how its times were placed. */
export function alignmentLine(s: SourceAlignment): string {
  const what =
    s.clock === 'reference'
      ? 'reference clock'
      : s.clock === 'collectives'
        ? `clock corrected ${correction(s.correctionNs)} by its NCCL collectives`
        : s.clock === 'same-host'
          ? `clock corrected ${correction(s.correctionNs)} as its host's other recordings were (none of its own collectives matched)`
          : 'no NCCL collective matched another recording: placed by its recorded times (its host clock; error unknown)';
  const residual =
    s.residualNs !== null
      ? `; residual ${formatDuration(s.residualNs)} median, ${formatDuration(s.residualMaxNs!)} max over ${s.collectives.toLocaleString('en-US')} collectives`
      : '';
  return `${s.file}${s.host ? ` (host ${s.host})` : ''}: ${what}${residual}; times shifted ${signed(s.shiftNs)}`;
}
