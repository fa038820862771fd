// Sandbox handler of the import targets: `streamscope import FILE -o OUT`
// as the CLI calls it (importTrace), then, when it succeeds, what
// `streamscope report` reads of the recording it wrote: an import that
// succeeds must leave a recording that reads like any other.
import fs from 'node:fs';
import path from 'node:path';
import { importTrace } from '../../../profiler/import/index.ts';
import { TraceFormatError } from '../../../profiler/import/json-events.ts';
import { RecordingFileError } from '../../../profiler/store/recording-error.ts';
import { outcomeOf, type Outcome } from '../lib/outcome.ts';
import { readReport } from './report-path.ts';

export interface ImportInput {
  file: string;
  /** In a folder of its own, empty before. */
  out: string;
  format?: 'kineto' | 'chrome' | 'nsys';
}

export type ImportOutcome = Outcome & { leftovers?: string[]; reportProblem?: Outcome };

const isFileError = (err: unknown) => err instanceof TraceFormatError || err instanceof RecordingFileError;

export async function handle({ file, out, format }: ImportInput): Promise<ImportOutcome> {
  let outcome: ImportOutcome;
  try {
    await importTrace(file, out, { format });
    outcome = { ok: true };
  } catch (err) {
    outcome = outcomeOf(err, isFileError);
  }
  // A failed import leaves nothing behind (RecordingWriter.abandon); a good one, the recording alone.
  const left = fs.readdirSync(path.dirname(out)).filter((f) => f !== (outcome.ok ? path.basename(out) : ''));
  if (left.length) outcome.leftovers = left;
  if (outcome.ok) {
    try {
      readReport(out);
    } catch (err) {
      outcome.reportProblem = outcomeOf(err, () => false);
    }
  }
  return outcome;
}
