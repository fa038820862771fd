// The commands that convert files: `export`, `import` (one trace, or many on
// worker threads), `ingest` (stream files → a recording) and `dump-stream`.
import fs from 'node:fs';
import os from 'node:os';
import { exportChromeTrace } from '../export/chrome-trace.ts';
import { importMany, recordingFor, tracesOf } from '../import/import-many.ts';
import { importTrace } from '../import/index.ts';
import { TraceFormatError } from '../import/json-events.ts';
import type { ImportResult } from '../import/kineto.ts';
import { dumpStream } from '../record/dump.ts';
import { ingestStreamFiles } from '../record/ingest-files.ts';
import { RecordingFileError } from '../store/recording-error.ts';
import { COMMANDS } from './commands.ts';
import { fail, failure, openForReading, workersOf } from './common.ts';
import { parseCommand, UsageError } from './usage.ts';

export async function cmdExport(args: string[]): Promise<number> {
  // --format has one value, chrome (Chrome trace JSON): commands.ts refuses any other.
  const { values, operands } = parseCommand(COMMANDS.export, args);
  const db = openForReading(operands[0]!);
  try {
    const r = await exportChromeTrace(db, values.output!, { overwrite: values.force });
    process.stderr.write(
      `streamscope: ${r.events.toLocaleString('en-US')} trace events (${r.flows.toLocaleString('en-US')} launch flows) → ${values.output}\n`,
    );
    for (const note of r.notes) process.stderr.write(`streamscope: note: ${note}\n`);
  } catch (err) {
    // The recording refused for a row in it (store/row-checks.ts): it cannot be read, exit 2 as report and check say it.
    if (err instanceof RecordingFileError && err.file === operands[0]) fail(err.message, 2);
    const { message, code } = failure(err);
    // Refused (exit 2) or said of the output already; a failed write of the stream (EFBIG) is said of it here.
    if (err instanceof RecordingFileError) fail(message, code);
    fail(`${values.output}: cannot write: ${(err as Error).message}`);
  } finally {
    db.close();
  }
  return 0;
}

export async function cmdImport(args: string[]): Promise<number> {
  const { values, operands } = parseCommand(COMMANDS.import, args);
  if (operands.length > 1 || isFolder(operands[0]!)) return importSeveral(operands, values);
  // One trace: -o names the recording, as it always has.
  if (values.output === undefined) throw new UsageError('missing -o OUT.sqlite', { showUsage: true });
  try {
    const r = await importTrace(operands[0]!, values.output, { format: values.format, overwrite: values.force });
    process.stderr.write(`streamscope: ${imported(r)} → ${values.output}\n`);
    return 0;
  } catch (err) {
    if (err instanceof TraceFormatError || err instanceof RecordingFileError) fail(err.message, 2);
    throw err;
  }
}

/** What an import wrote, in words. */
function imported(r: ImportResult): string {
  const c = r.counts;
  // Synchronizations and CPU operations only where the trace had them (a Kineto trace taken with cuda_sync events).
  const more = [c.syncs ? `${c.syncs} synchronizations` : '', c.cpuOps ? `${c.cpuOps} CPU operations` : ''].filter(Boolean).map((x) => `${x}, `);
  return (
    `${r.format}: ${c.kernels} kernels, ${c.memcpys} copies, ${c.memsets} memsets, ${c.apiCalls} API calls, ${more.join('')}` +
    `${c.ranges} host ranges (${r.skipped} other events skipped)`
  );
}

function isFolder(file: string): boolean {
  try {
    return fs.statSync(file).isDirectory();
  } catch {
    return false;
  }
}

/**
 * `import A.json B.json …` or a folder: each trace into its own recording
 * (import/import-many.ts), a line per trace as it is done; exit 1 after
 * naming every trace that failed.
 */
async function importSeveral(inputs: string[], values: { output?: string; format?: string; force?: boolean; workers?: string }): Promise<number> {
  const folder = values.output;
  if (folder !== undefined) {
    if (fs.existsSync(folder) && !isFolder(folder))
      fail(`${folder}: not a folder (with several traces, -o names the folder their recordings are written in)`, 2);
    fs.mkdirSync(folder, { recursive: true });
  }
  let traces: string[];
  try {
    traces = tracesOf(inputs);
  } catch (err) {
    fail((err as Error).message, 2);
  }
  const workers = workersOf(values.workers);
  const t0 = performance.now();
  const width = String(traces.length).length;
  const outcomes = await importMany(
    traces.map((trace) => ({ trace, output: recordingFor(trace, folder) })),
    {
      format: values.format,
      overwrite: values.force,
      workers,
      onFile: (o, done, of) => {
        const at = `[${String(done).padStart(width)}/${of}]`;
        process.stderr.write(
          o.ok
            ? `streamscope: ${at} ${o.trace}: ${imported(o.result)} → ${o.output} (${o.seconds.toFixed(2)} s)\n`
            : `streamscope: ${at} failed: ${o.problem}\n`,
        );
      },
    },
  );
  const failed = outcomes.filter((o) => !o.ok);
  const seconds = ((performance.now() - t0) / 1000).toFixed(1);
  const threads = workers === 0 ? 'no worker threads' : `${Math.min(workers ?? os.availableParallelism(), traces.length)} worker threads`;
  if (failed.length === 0) {
    process.stderr.write(`streamscope: imported ${traces.length} traces in ${seconds} s (${threads})\n`);
    return 0;
  }
  process.stderr.write(
    `streamscope: imported ${traces.length - failed.length} of ${traces.length} traces in ${seconds} s (${threads}); ${failed.length} failed:\n`,
  );
  for (const o of failed) if (!o.ok) process.stderr.write(`  ${o.problem}\n`);
  return 1;
}

export async function cmdIngest(args: string[]): Promise<number> {
  const { values, operands } = parseCommand(COMMANDS.ingest, args);
  const output = values.output!;
  // A failure is said by ingestStreamFiles with what became of the output (kept incomplete, or nothing written); main prints it.
  const r = await ingestStreamFiles(output, operands, { overwrite: values.force });
  const state = r.complete ? 'complete' : `INCOMPLETE: ${r.incompleteReason}`;
  process.stderr.write(`streamscope: ${r.records.toLocaleString('en-US')} records from ${r.processes} stream(s) → ${output} (${state})\n`);
  return 0;
}

export function cmdDumpStream(args: string[]): number {
  const { values, operands } = parseCommand(COMMANDS['dump-stream'], args);
  process.stdout.write(dumpStream(operands[0]!, values.json ?? false));
  return 0;
}
