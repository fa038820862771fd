// The commands that convert files: `export`, `import`, `ingest` (stream
// files → a recording) and `dump-stream`.
import { parseArgs } from 'node:util';
import { exportChromeTrace } from '../export/chrome-trace.ts';
import { importTrace } from '../import/index.ts';
import { TraceFormatError } from '../import/json-events.ts';
import { dumpStream } from '../record/dump.ts';
import { ingestStreamFiles } from '../record/ingest-files.ts';
import { RecordingFileError } from '../store/recording-error.ts';
import { fail, openForReading } from './common.ts';

export async function cmdExport(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { output: { type: 'string', short: 'o' }, format: { type: 'string' } } });
  if (positionals.length !== 1 || !values.output) fail('usage: streamscope export FILE -o OUT.json [--format chrome]', 2);
  if (values.format && values.format !== 'chrome')
    fail(`--format: only 'chrome' (Chrome trace JSON, opened by Perfetto UI and chrome://tracing) is supported, got '${values.format}'`, 2);
  const db = openForReading(positionals[0]!);
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
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { output: { type: 'string', short: 'o' }, format: { type: 'string' }, force: { type: 'boolean', short: 'f' } },
  });
  if (positionals.length !== 1 || !values.output) fail('usage: streamscope import TRACE -o OUT.sqlite [--format kineto|chrome|nsys] [--force]', 2);
  try {
    const r = await importTrace(positionals[0]!, values.output!, { format: values.format, overwrite: values.force });
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
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { output: { type: 'string', short: 'o' }, force: { type: 'boolean', short: 'f' } },
  });
  if (!values.output || positionals.length === 0) fail('usage: streamscope ingest -o FILE STREAM_FILE_OR_DIR...', 2);
  let r: Awaited<ReturnType<typeof ingestStreamFiles>>;
  try {
    r = await ingestStreamFiles(values.output, positionals, { overwrite: values.force });
  } catch (err) {
    // The recording could not be written (a full disk): what was stored before the failure is kept, marked incomplete.
    if ((err as Error).message.includes(`${values.output}: `))
      fail(`${values.output}: cannot write: ${(err as Error).message.split(`${values.output}: `).at(-1)}; it holds what was stored before, marked incomplete`);
    throw err;
  }
  const state = r.complete ? 'complete' : `INCOMPLETE: ${r.incompleteReason}`;
  process.stderr.write(`streamscope: ${r.records.toLocaleString('en-US')} records from ${r.processes} stream(s) → ${values.output} (${state})\n`);
  return 0;
}

export function cmdDumpStream(args: string[]): number {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { json: { type: 'boolean' } } });
  if (positionals.length !== 1) fail('usage: streamscope dump-stream STREAM_FILE [--json]', 2);
  process.stdout.write(dumpStream(positionals[0]!, values.json ?? false));
  return 0;
}
