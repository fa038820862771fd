// The commands that convert files: `export`, `import`, `ingest` (stream
// files → a recording) and `dump-stream`.
import { exportChromeTrace } from '../export/chrome-trace.ts';
import { importTrace } from '../import/index.ts';
import { TraceFormatError } from '../import/json-events.ts';
import { dumpStream } from '../record/dump.ts';
import { ingestStreamFiles } from '../record/ingest-files.ts';
import { RecordingFileError } from '../store/recording-error.ts';
import { COMMANDS } from './commands.ts';
import { fail, openForReading } from './common.ts';
import { parseCommand } from './usage.ts';

export async function cmdExport(args: string[]): Promise<number> {
  // --format has one value, chrome (Chrome trace JSON): commands.ts refuses any other.
  const { values, operands } = parseCommand(COMMANDS.export, args);
  const db = openForReading(operands[0]!);
  try {
    const r = await exportChromeTrace(db, values.output!);
    process.stderr.write(
      `streamscope: ${r.events.toLocaleString('en-US')} trace events (${r.flows.toLocaleString('en-US')} launch flows) → ${values.output}\n`,
    );
  } catch (err) {
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
  let r: Awaited<ReturnType<typeof ingestStreamFiles>>;
  try {
    r = await ingestStreamFiles(output, operands, { overwrite: values.force });
  } catch (err) {
    // The recording could not be written (a full disk): what was stored before the failure is kept, marked incomplete.
    if ((err as Error).message.includes(`${output}: `))
      fail(`${output}: cannot write: ${(err as Error).message.split(`${output}: `).at(-1)}; it holds what was stored before, marked incomplete`);
    throw err;
  }
  const state = r.complete ? 'complete' : `INCOMPLETE: ${r.incompleteReason}`;
  process.stderr.write(`streamscope: ${r.records.toLocaleString('en-US')} records from ${r.processes} stream(s) → ${output} (${state})\n`);
  return 0;
}

export function cmdDumpStream(args: string[]): number {
  const { values, operands } = parseCommand(COMMANDS['dump-stream'], args);
  process.stdout.write(dumpStream(operands[0]!, values.json ?? false));
  return 0;
}
