// Sandbox handler of the output-paths target: one of the commands that
// write a file (export, import, ingest, merge), called as the CLI calls it,
// on the output path the target made — once, or twice at once (two writers
// of one output in one process, as the app's threads may be). Says what
// each call did, as plain data; the target judges it (lib/output-check.ts).
import { exportChromeTrace } from '../../../profiler/export/chrome-trace.ts';
import { importTrace } from '../../../profiler/import/index.ts';
import { TraceFormatError } from '../../../profiler/import/json-events.ts';
import { mergeRecordings } from '../../../profiler/merge/merge.ts';
import { StreamFormatError } from '../../../profiler/record/decoder.ts';
import { ingestStreamFiles } from '../../../profiler/record/ingest-files.ts';
import { RecordError } from '../../../profiler/record/record-error.ts';
import { openRecording } from '../../../profiler/store/database.ts';
import { RecordingFileError } from '../../../profiler/store/recording-error.ts';
import { outcomeOf, type Outcome } from '../lib/outcome.ts';

export type WritingCommand = 'export' | 'import' | 'ingest' | 'merge';

export interface OutputInput {
  command: WritingCommand;
  /** What the command reads: a recording (export, merge), a trace (import), streams or their directory (ingest). */
  inputs: string[];
  output: string;
  force: boolean;
  /** Two calls at once instead of one. */
  race: boolean;
}

const isFileError = (err: unknown) =>
  err instanceof RecordingFileError || err instanceof TraceFormatError || err instanceof StreamFormatError || err instanceof RecordError;

async function write({ command, inputs, output, force }: OutputInput): Promise<void> {
  switch (command) {
    case 'export': {
      const db = openRecording(inputs[0]!, { readonly: true });
      try {
        await exportChromeTrace(db, output, { overwrite: force });
      } finally {
        db.close();
      }
      return;
    }
    case 'import':
      await importTrace(inputs[0]!, output, { overwrite: force });
      return;
    case 'ingest':
      await ingestStreamFiles(output, inputs, { overwrite: force });
      return;
    case 'merge':
      mergeRecordings(inputs, output, { overwrite: force });
      return;
  }
}

export async function handle(input: OutputInput): Promise<Outcome[]> {
  const once = async (): Promise<Outcome> => {
    try {
      await write(input);
      return { ok: true };
    } catch (err) {
      return outcomeOf(err, isFileError);
    }
  };
  return Promise.all(input.race ? [once(), once()] : [once()]);
}
