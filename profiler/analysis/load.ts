// One call for what the report, the check and the app need from a recording:
// the trace, its host calls and the diagnosis.
import { loadTimelineColumns } from '../native/addon.ts';
import type { Db } from '../store/database.ts';
import { diagnose, type Diagnosis } from './diagnose.ts';
import { loadHost, type Host } from './host.ts';
import { loadTrace, type Trace } from './trace.ts';

export interface Analysis {
  trace: Trace;
  host: Host;
  diagnosis: Diagnosis;
}

/** Milliseconds per phase of one analyze() call (the benchmark prints them). */
export interface AnalysisTimings {
  /** Reading the GPU operations and API calls (native, all cores). */
  load: number;
  /** Devices, streams, strings and derived op columns. */
  trace: number;
  /** Calls per thread, call of each op, events and waits. */
  host: number;
  /** Every rule, and the what-if replay of the findings it can fix. */
  diagnose: number;
}

export function analyze(db: Db, timings?: AnalysisTimings): Analysis {
  let t = performance.now();
  const lap = (phase: keyof AnalysisTimings) => {
    const now = performance.now();
    if (timings) timings[phase] = now - t;
    t = now;
  };
  const columns = loadTimelineColumns(db.name);
  lap('load');
  const trace = loadTrace(db, columns.ops, columns.calls);
  lap('trace');
  const host = loadHost(db, trace.ops, columns.calls);
  lap('host');
  const diagnosis = diagnose(trace, host);
  lap('diagnose');
  return { trace, host, diagnosis };
}
