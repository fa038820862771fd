// `node bench/analysis-run.ts FILE [--scope steady-state|whole|window] [--here]`:
// one timed analysis of FILE — analyze() and its diagnosis, what `streamscope
// report` runs (the fixes' what-ifs on a second thread: --here, on this one)
// — in this process, printed as one JSON line: its seconds and phases, the
// operations and findings, the load average as it began. Its heap keeps
// what it frees, as report's does (native/addon/src/memory_policy.cc).
//
// The analysis benchmark (run-bench.ts benchAnalysis) runs each of its
// timed analyses as a process of this, as a user's command runs: on the
// development VM a second analysis in the same process ran 5.4 → 7.8 –
// 8.2 s (its load 1.4 → 3.6 s), the first one's 2.5 GB of arrays still
// held or just handed back to the host, whose pages the next one faults in
// again; a fresh process each run measures every run alike.
import os from 'node:os';
import { parseArgs } from 'node:util';
import { analyze, type AnalysisTimings } from '../profiler/analysis/diagnosis/analyze.ts';
import type { Scope } from '../profiler/contract/scope.ts';
import { keepFreedMemory } from '../profiler/native/addon.ts';
import { openRecording } from '../profiler/store/database.ts';

export interface AnalysisRun {
  seconds: number;
  phasesMs: AnalysisTimings;
  operations: number;
  findings: number;
  /** The 1-minute load average as the run began. */
  loadAverage1m: number;
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { scope: { type: 'string', default: 'steady-state' }, here: { type: 'boolean', default: false } },
});
const file = positionals[0];
if (!file) throw new Error('usage: node bench/analysis-run.ts FILE [--scope steady-state|whole|window] [--here]');

// As `streamscope report` runs (profiler/cli/streamscope.ts oneShot): the heap keeps what it frees.
keepFreedMemory();
const db = openRecording(file, { readonly: true });
try {
  const loadAverage1m = os.loadavg()[0]!;
  // The window: from 10 % of the span to its end (a cut: the selection work a scope adds). The span is the zones' extent
  // (every row's, calls' too: the trace's span), read before the clock starts: a whole analysis first, for its trace's
  // span, would be a second analysis in this process.
  let scope: Scope | undefined = values.scope === 'whole' ? { kind: 'whole' } : undefined;
  if (values.scope === 'window') {
    const [start, end] = db.prepare('SELECT min(start_ns), max(end_ns) FROM zones WHERE table_id IN (1, 2, 3, 5)').raw().get() as [number, number];
    scope = { kind: 'window', startNs: start + (end - start) / 10, endNs: end + 1 };
  }
  const phasesMs: AnalysisTimings = { load: 0, scope: 0, trace: 0, host: 0, diagnose: 0 };
  const t0 = performance.now();
  const a = analyze(db, { timings: phasesMs, scope, whatIfThread: !values.here });
  const findings = a.diagnosis.findings.length; // diagnosed when first read (analyze.ts): timed here
  const seconds = (performance.now() - t0) / 1000;
  const run: AnalysisRun = { seconds, phasesMs, operations: a.trace.ops.length, findings, loadAverage1m };
  console.log(JSON.stringify(run));
} finally {
  db.close();
}
