// `streamscope record` and `devices`: the commands that run on the GPU's side.
import { constants as osConstants } from 'node:os';
import path from 'node:path';
import { CaptureRangeError, parseCaptureRange, type CaptureRange } from '../contract/record-request.ts';
import { devices } from '../native/addon.ts';
import { formatCaptureResult } from '../record/capture-range.ts';
import { expandOutputName } from '../record/output-name.ts';
import { ingested, progressLine, type EventFields } from '../record/progress.ts';
import { record } from '../record/recorder.ts';
import { workloadArgv } from '../record/workload.ts';
import { COMMANDS } from './commands.ts';
import { failure } from './common.ts';
import { openLiveView, type LiveView } from './live-view.ts';
import { parseCommand, UsageError, type Values } from './usage.ts';

function stamp(): string {
  return new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
}

export async function cmdRecord(args: string[]): Promise<number> {
  const t0 = Date.now();
  let parsed;
  try {
    // The target is what follows `--`, as it is; --progress is text or json (commands.ts).
    parsed = parseCommand(COMMANDS.record, args);
  } catch (err) {
    // --progress json promises a line for every way this ends, a command line refused too (the app shows its error).
    if (!(err instanceof UsageError) || !asksJsonProgress(args)) throw err;
    process.stderr.write(progressLine({ phase: 'failed', error: err.message, exitCode: 2 }, { elapsedMs: Date.now() - t0, output: '' }));
    return 2;
  }
  const { values, passthrough: target } = parsed;
  const mode = values.progress ?? 'text';
  const defaultName = values.workload !== undefined ? `${values.workload}-${values.scenario ?? ''}` : path.basename(target[0] ?? 'recording');
  // -o may name the host, pid, rank and local rank (%h %p %r %l): one recorder per node or rank, started by the job's own launcher.
  const named = (): string => (values.output !== undefined ? expandOutputName(values.output) : `streamscope-${defaultName}-${stamp()}.sqlite`);
  if (mode === 'text') return recordTo(values, target, named(), null);
  // JSON: every way this ends is a line, the failures included.
  let output = values.output ?? '';
  const emit = (fields: EventFields) => {
    process.stderr.write(progressLine(fields, { elapsedMs: Date.now() - t0, output }));
  };
  try {
    output = named();
    return await recordTo(values, target, output, emit);
  } catch (err) {
    const failed = failure(err);
    emit({ phase: 'failed', error: failed.message, exitCode: failed.code });
    return failed.code;
  }
}

/** `--progress json` among record's own words (before `--`), read before they parse. */
function asksJsonProgress(args: string[]): boolean {
  const end = args.indexOf('--');
  const own = end < 0 ? args : args.slice(0, end);
  return own.some((a, i) => a === '--progress=json' || (a === '--progress' && own[i + 1] === 'json'));
}

/**
 * `record` once its options are read; a usage problem is a UsageError
 * (exit code 2). `emit` writes the JSON progress lines; null: the text mode.
 */
async function recordTo(
  values: Values<typeof COMMANDS.record>,
  target: string[],
  output: string,
  emit: ((fields: EventFields) => void) | null,
): Promise<number> {
  const usage = (message: string): never => {
    throw new UsageError(message);
  };
  // A malformed range is refused before anything runs.
  let captureRange: CaptureRange | undefined;
  if (values['capture-range'] !== undefined) {
    try {
      captureRange = parseCaptureRange(values['capture-range']);
    } catch (err) {
      if (err instanceof CaptureRangeError) usage(err.message);
      throw err;
    }
  }
  let argv: string[] = target;
  let meta: Record<string, string> = {};
  if (values.workload !== undefined) {
    if (target.length) usage('give either --workload or a command after --, not both');
    if (!values.scenario) usage('--workload needs --scenario');
    try {
      argv = workloadArgv({ ...values, workload: values.workload, scenario: values.scenario! });
    } catch (err) {
      usage((err as Error).message);
    }
    meta = { workload: values.workload, scenario: values.scenario! };
  } else if (!target.length) {
    usage('nothing to record: give --workload NAME --scenario NAME, or -- COMMAND [ARGS...]');
  }
  let pid: number | null = null;
  emit?.({ phase: 'preflight' });
  const tty = !emit && process.stderr.isTTY && !values.quiet;
  let viewer: Promise<LiveView> | null = null;
  const say = (line: string) => process.stderr.write(`${tty ? '\r\x1b[K' : ''}${line}\n`);
  const result = await record({
    onCreated: values.live ? (file) => (viewer = openLiveView(file, say)) : undefined,
    output,
    overwrite: values.force,
    argv,
    meta,
    captureRange,
    onStart: emit
      ? (p) => {
          pid = p;
          emit({ phase: 'running', pid });
        }
      : undefined,
    onProgress: emit
      ? (p) => emit({ phase: 'running', pid, ...ingested(p) })
      : tty
        ? (p, ms) =>
            process.stderr.write(
              `\r\x1b[Kstreamscope: recording… ${p.records.toLocaleString('en-US')} records from ${p.files.size} process(es), ${(ms / 1000).toFixed(1)} s`,
            )
        : undefined,
    onTargetExit: emit ? (s, p) => emit({ phase: 'finishing', targetExitCode: s.code, targetSignal: s.signal, ...ingested(p) }) : undefined,
  });
  if (tty) process.stderr.write('\r\x1b[K');
  const capture = result.capture;
  const captureLine = capture?.error
    ? `error: --capture-range ${capture.spec} could not be applied (${capture.error}): the recording holds everything recorded`
    : capture?.result?.neverOccurred
      ? `warning: ${capture.result.neverOccurred}`
      : capture?.result
        ? formatCaptureResult(capture.result)
        : null;
  let exitCode: number;
  if (result.processes === 0 || result.collectorErrors.some((e) => e.code !== 3)) {
    // Nothing (useful) was recorded: never exit 0 as if all were well.
    exitCode = result.exitCode && result.exitCode !== 0 ? result.exitCode : 1;
  } else if (result.signal) {
    exitCode = 128 + (signalNumber(result.signal) ?? 0);
  } else {
    exitCode = result.exitCode ?? 1;
  }
  if (emit) {
    emit({
      phase: 'done',
      records: result.records,
      bytes: result.bytes,
      processes: result.processes,
      complete: result.complete,
      incompleteReason: result.incompleteReason,
      targetExitCode: result.exitCode,
      targetSignal: result.signal,
      exitCode,
      collectorErrors: result.collectorErrors,
      notes: result.notes,
      capture:
        capture && captureLine
          ? {
              spec: capture.spec,
              error: capture.error,
              neverOccurred: capture.result?.neverOccurred ?? null,
              windows: capture.result?.windows ?? null,
              kept: capture.result?.kept ?? null,
              dropped: capture.result?.dropped ?? null,
              message: captureLine,
            }
          : null,
    });
    return exitCode;
  }
  // One rank of a job: its summary for the job's report, built here where it ran (cli/job-commands.ts).
  if (result.processes > 0) {
    const line = await (await import('./job-commands.ts')).summarizeRecordedRank(result.output);
    if (line) result.notes.push(line);
  }
  const state = result.complete ? 'complete' : `INCOMPLETE: ${result.incompleteReason}`;
  process.stderr.write(`streamscope: ${result.records.toLocaleString('en-US')} records from ${result.processes} process(es) → ${result.output} (${state})\n`);
  for (const e of result.collectorErrors) process.stderr.write(`streamscope: collector (pid ${e.pid}): ${e.message}\n`);
  for (const n of result.notes) process.stderr.write(`streamscope: note: ${n}\n`);
  if (captureLine) process.stderr.write(`streamscope: ${captureLine}\n`);
  if (viewer) await keepServing(await viewer);
  return exitCode;
}

/**
 * After `record --live`: browser mode's view of the finished recording
 * stays until Ctrl-C when someone is at the terminal (a script goes on at
 * once). The exit code stays the target's.
 */
async function keepServing(view: LiveView): Promise<void> {
  if (!view.url || !process.stdin.isTTY) return view.stop();
  process.stderr.write(`streamscope: the live view keeps serving the finished recording at ${view.url} (Ctrl-C stops it)\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  view.stop();
}

function signalNumber(sig: NodeJS.Signals): number | undefined {
  return (osConstants.signals as Record<string, number>)[sig];
}

export function cmdDevices(args: string[]): number {
  const { values } = parseCommand(COMMANDS.devices, args);
  const inv = devices();
  if (values.json) {
    process.stdout.write(JSON.stringify(inv, null, 2) + '\n');
    return 0;
  }
  if (inv.error) process.stdout.write(`no CUDA devices: ${inv.error}\n`);
  for (const d of inv.devices) {
    const pcie = d.pcie ? `, PCIe gen ${d.pcie.currentGeneration} x${d.pcie.currentWidth}` : '';
    process.stdout.write(
      `${d.ordinal}: ${d.name} (cc ${d.ccMajor}.${d.ccMinor}, ${d.smCount} SMs, ${(d.totalMemoryBytes / 2 ** 30).toFixed(1)} GiB, ` +
        `${d.asyncEngineCount} copy engines, concurrent kernels ${d.concurrentKernels ? 'yes' : 'no'}${pcie}) ${d.uuid}\n`,
    );
  }
  return 0;
}
