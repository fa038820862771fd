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

export function analyze(db: Db): Analysis {
  const columns = loadTimelineColumns(db.name);
  const trace = loadTrace(db, columns.ops, columns.calls);
  const host = loadHost(db, trace.ops, columns.calls);
  return { trace, host, diagnosis: diagnose(trace, host) };
}
