// What every command shares: how it fails, how it opens a recording to read,
// and how an error that ends it is said.
import { StreamFormatError } from '../record/decoder.ts';
import { RecordError } from '../record/record-error.ts';
import { openRecording, type Db } from '../store/database.ts';
import { OutputRefusedError } from '../store/output-file.ts';
import { RecordingFileError } from '../store/recording-error.ts';
import { UsageError } from './usage.ts';

export function fail(message: string, code = 1): never {
  process.stderr.write(`streamscope: ${message}\n`);
  process.exit(code);
}

/** `--workers N` (summarize, import): a whole number, 0 (no worker threads: the work runs on the command's own) or more. */
export function workersOf(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`--workers takes a whole number (0: no worker threads), not '${value}'`);
  return n;
}

/**
 * A recording opened read-only for a command that reads it; a file that is
 * not one (missing, truncated, newer schema, ...) ends the command with its
 * message and exit code 2, the code for "could not run", not "failed".
 */
/** At most 12 numbers, then how many more: what a refusal lists of the ranks or pids a recording has. */
export function listed(xs: number[]): string {
  return xs.length <= 12 ? xs.join(', ') : `${xs.slice(0, 12).join(', ')} and ${xs.length - 12} more`;
}

export function openForReading(file: string): Db {
  try {
    return openRecording(file, { readonly: true });
  } catch (err) {
    if (err instanceof RecordingFileError) fail(err.message, 2);
    throw err;
  }
}

/** The message and exit code of an error that ends a command (as `main` prints it; `record --progress json` as its failed line). */
export function failure(err: unknown): { message: string; code: number } {
  if (err instanceof RecordError) return { message: err.message, code: err.exitCode };
  if (err instanceof UsageError) return { message: err.message, code: 2 };
  // An output refused before anything was written (it exists, it is an input): the command could not run.
  if (err instanceof OutputRefusedError) return { message: err.message, code: 2 };
  if (err instanceof RecordingFileError || err instanceof StreamFormatError) return { message: err.message, code: 1 };
  return { message: err instanceof Error ? (err.stack ?? err.message) : String(err), code: 70 };
}
