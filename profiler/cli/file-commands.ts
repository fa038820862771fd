// The commands that convert files: `export`, `import`, `ingest` (stream
// files → a recording) and `dump-stream`.
import { exportChromeTrace } from '../export/chrome-trace.ts';
import { importTrace } from '../import/index.ts';
import { TraceFormatError } from '../import/json-events.ts';
import { dumpStream } from '../record/dump.ts';
import { ingestStreamFiles } from '../record/ingest-files.ts';
import { RecordingFileError } from '../store/recording-error.ts';
import { COMMANDS } from './commands.ts';
import { fail, failure, openForReading } from './common.ts';
import { parseCommand } from './usage.ts';

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
  try {
    const r = await importTrace(operands[0]!, values.output!, { format: values.format, overwrite: values.force });
    const c = r.counts;
    // Synchronizations and CPU operations only where the trace had them (a Kineto trace taken with cuda_sync events).
    const more = [c.syncs ? `${c.syncs} synchronizations` : '', c.cpuOps ? `${c.cpuOps} CPU operations` : ''].filter(Boolean).map((x) => `${x}, `);
    process.stderr.write(
      `streamscope: ${r.format}: ${c.kernels} kernels, ${c.memcpys} copies, ${c.memsets} memsets, ${c.apiCalls} API calls, ${more.join('')}` +
        `${c.ranges} host ranges (${r.skipped} other events skipped) → ${values.output}\n`,
    );
    return 0;
  } catch (err) {
    if (err instanceof TraceFormatError || err instanceof RecordingFileError) fail(err.message, 2);
    throw err;
  }
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
