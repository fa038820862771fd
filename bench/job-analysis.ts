// One run of a job's cross-rank analysis rank by rank, as `streamscope
// report` runs it on a recording of many ranks (profiler/analysis/diagnosis/job.ts:
// the parts read one at a time on worker threads, the report built), in a
// process of its own so that its memory is its own: run-bench.ts spawns it
// once per measurement. Prints one JSON line: wall seconds, this process's
// CPU seconds, its peak resident memory, the analysis's phases.
//
//   node bench/job-analysis.ts JOB.sqlite [--workers N] [--json-report]
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { analyzeJob } from '../profiler/analysis/diagnosis/job.ts';
import { readTraceTables } from '../profiler/analysis/trace.ts';
import { buildJobReport } from '../profiler/report/report.ts';
import { openRecording } from '../profiler/store/database.ts';
import { readProcesses } from '../profiler/store/ranks.ts';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { workers: { type: 'string' } } });
const file = positionals[0];
if (!file) {
  process.stderr.write('usage: node bench/job-analysis.ts JOB.sqlite [--workers N]\n');
  process.exit(2);
}
/**
 * This process's peak resident memory (Linux: VmHWM, which starts anew at
 * exec; getrusage's maxrss keeps the parent's from before the exec, and the
 * benchmark's parent may hold the whole job's 12 GiB analysis).
 */
function peakResidentGiB(): number {
  try {
    const kb = /^VmHWM:\s+(\d+) kB/m.exec(fs.readFileSync('/proc/self/status', 'utf8'));
    if (kb) return Number(kb[1]) / 2 ** 20;
  } catch {
    // not Linux
  }
  return process.resourceUsage().maxRSS / 2 ** 20;
}

const cpu0 = process.cpuUsage();
const t0 = performance.now();
const db = openRecording(file, { readonly: true });
try {
  const job = await analyzeJob(db, { ...(values.workers !== undefined ? { workers: Number(values.workers) } : {}) });
  const report = buildJobReport(file, job, readTraceTables(db), readProcesses(db), (performance.now() - t0) / 1000);
  const seconds = (performance.now() - t0) / 1000;
  const u = process.cpuUsage(cpu0);
  process.stdout.write(
    JSON.stringify({
      seconds,
      cpu: (u.user + u.system) / 1e6,
      maxRssGiB: peakResidentGiB(),
      workers: job.workers,
      parts: job.parts,
      partsWithCalls: job.partsWithCalls,
      timings: job.timings,
      scopeRowsRead: job.scopeRowsRead,
      ranks: report.communication.ranks.length,
      straggler: report.stragglers.straggler?.pid ?? null,
      findings: report.findings.length,
    }) + '\n',
  );
} finally {
  db.close();
}
