// `streamscope check FILE [--min-overlap X] [--fail-on info|warning|error] [--json]`:
// a concurrency gate for CI. Exit 0 when the recording passes, 1 when it
// does not (with a one-line reason on stderr), 2 for bad usage or a file
// that cannot be read. JSON shape: docs/FORMATS.md, "check --json".
import { analyze } from '../analysis/diagnosis/analyze.ts';
import type { Scope, ScopeInfo } from '../contract/scope.ts';
import { gpuOrdinals } from '../analysis/trace.ts';
import { gpuNames } from '../contract/ranks.ts';
import { readProcesses } from '../store/ranks.ts';
import { COMMANDS } from './commands.ts';
import { scopeFromArgs } from './scope-args.ts';
import { parseCommand, UsageError } from './usage.ts';
import { SEVERITY_RANK, type Finding, type Severity } from '../contract/findings.ts';
import { overlapByDevice } from '../analysis/overlap.ts';
import { openRecording } from '../store/database.ts';
import { formatDuration } from '../contract/time.ts';
import type { LeftOutRows } from '../native/addon.ts';
import { leftOutNote } from '../store/row-checks.ts';

// 2: scope (what was checked: the steady state unless asked otherwise); gpu (CUDA ordinal) per overlap entry.
// 3: findings carry fixId (the what-if fix that removes their cause).
// 4: leftOut (rows the analysis left out as not possible: store/row-checks.ts).
export const CHECK_VERSION = 4;

export interface CheckResult {
  checkVersion: number;
  file: string;
  pass: boolean;
  /** Why it failed, one entry per broken rule; empty when it passed. */
  reasons: string[];
  minOverlap: number | null;
  failOn: Severity | null;
  scope: ScopeInfo;
  /** `name`: the GPU as the report names it ("GPU 0"; in a job "rank 1 (node-b, GPU 0)"). */
  overlap: { deviceId: number; gpu: number; name: string; all: number | null; compute: number | null; htod: number | null; dtoh: number | null }[];
  findings: Finding[];
  /** Rows left out of the check as not possible (an end before its start, a negative size: store/row-checks.ts), the first named; null: none. */
  leftOut: LeftOutRows | null;
}

/** The command line; a UsageError for one that does not fit (--fail-on's values: commands.ts). */
export function parseCheckArgs(args: string[]): { file: string; minOverlap: number | null; failOn: Severity | null; json: boolean; scope: Scope } {
  const { values, operands } = parseCommand(COMMANDS.check, args);
  let minOverlap: number | null = null;
  if (values['min-overlap'] !== undefined) {
    minOverlap = Number(values['min-overlap']);
    if (!Number.isFinite(minOverlap) || minOverlap < 1)
      throw new UsageError(`--min-overlap: expected a number ≥ 1 (1.0 = no overlap), got '${values['min-overlap']}'`);
  }
  return { file: operands[0]!, minOverlap, failOn: values['fail-on'] ?? null, json: values.json ?? false, scope: scopeFromArgs(values) };
}

/** Throws RecordingFileError (unreadable file) or ScopeError (no such range in it). */
export function runCheck(file: string, minOverlap: number | null, failOn: Severity | null, scope?: Scope): CheckResult {
  const db = openRecording(file, { readonly: true });
  try {
    // The check reads the diagnosis at once: its what-ifs begin on a second thread as the rules name them (analyze.ts).
    const { trace, diagnosis, scope: info, columns } = analyze(db, { scope, file, whatIfThread: true });
    const gpu = gpuOrdinals(trace.devices);
    const names = gpuNames(trace.devices, readProcesses(db), trace.streams);
    const overlap = overlapByDevice(trace).filter((o) => o.all.count > 0);
    const reasons: string[] = [];
    if (minOverlap !== null) {
      if (overlap.length === 0) reasons.push('no GPU operations recorded');
      for (const o of overlap) {
        const f = o.all.overlapFactor ?? 1;
        if (f < minOverlap) reasons.push(`${names.device(o.deviceId)} overlap ${f.toFixed(2)} < ${minOverlap}`);
      }
    }
    if (failOn !== null) {
      const bad = diagnosis.findings.filter((f) => SEVERITY_RANK[f.severity] >= SEVERITY_RANK[failOn]);
      if (bad.length) {
        const worst = bad[0]!;
        reasons.push(
          `${bad.length} finding${bad.length > 1 ? 's' : ''} at ${failOn} or worse, worst: ${worst.kind} (${formatDuration(worst.costNs)}): ${worst.title}`,
        );
      }
    }
    return {
      checkVersion: CHECK_VERSION,
      file,
      pass: reasons.length === 0,
      reasons,
      minOverlap,
      failOn,
      scope: info,
      overlap: overlap.map((o) => ({
        deviceId: o.deviceId,
        gpu: gpu(o.deviceId),
        name: names.device(o.deviceId),
        all: o.all.overlapFactor,
        compute: o.compute.overlapFactor,
        htod: o.htod.overlapFactor,
        dtoh: o.dtoh.overlapFactor,
      })),
      findings: diagnosis.findings,
      leftOut: columns.leftOut ?? null,
    };
  } finally {
    db.close();
  }
}

/** The one line CI shows; rows left out are said on it, whether it passed or not. */
export function checkLine(r: CheckResult): string {
  const overlap = r.overlap.map((o) => `${o.name} ${(o.all ?? 1).toFixed(2)}`).join(', ');
  const scope = r.scope.kind === 'steady-state' ? '' : ` (${r.scope.label})`;
  const left = r.leftOut ? `; ${leftOutNote(r.leftOut)}` : '';
  return r.pass
    ? `PASS ${r.file}${scope}: overlap ${overlap || '-'}; ${r.findings.length} findings${left}`
    : `FAIL ${r.file}${scope}: ${r.reasons.join('; ')}${left}`;
}
