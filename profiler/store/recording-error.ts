// One error type for every problem with a file the user gave us: the message
// always starts with the file's path, then says what is wrong with it, on
// one line.
export class RecordingFileError extends Error {
  readonly file: string;
  readonly problem: string;
  constructor(file: string, problem: string, options?: { cause?: unknown }) {
    const line = oneLine(problem);
    super(`${file}: ${line}`, options);
    this.name = 'RecordingFileError';
    this.file = file;
    this.problem = line;
  }
}

/** Longest problem kept whole (one that quotes a corrupt schema or a value could run to megabytes). */
const MAX_PROBLEM = 500;

/**
 * `text` as one line of at most `max` characters: what a bad file
 * puts in a message (SQLite quoting a corrupt schema, a value's text) may
 * hold line breaks and control characters, and a message is one line.
 */
export function oneLine(text: string, max = MAX_PROBLEM): string {
  // eslint-disable-next-line no-control-regex -- control characters are what is replaced
  const line = text.replace(/[\r\n]+/g, ' ').replace(/[\u0000-\u001f\u007f]/g, '?');
  return line.length > max ? `${line.slice(0, max)}…` : line;
}

/** Codes of a failed write: SQLite's (a full disk, an I/O error) and the system's through Node's fs. */
const WRITE_FAILURES = new Set(['SQLITE_FULL', 'ENOSPC', 'EFBIG', 'EDQUOT', 'EIO', 'EROFS']);

/**
 * `err` as the output's error when it is a failure to write (a full disk, a
 * file too large, an I/O error): said of the file the user named, whatever
 * temporary file or input was being handled; null for any other error.
 */
export function writeFailureOf(err: unknown, output: string): RecordingFileError | null {
  const code = (err as { code?: unknown }).code;
  if (typeof code !== 'string' || !(WRITE_FAILURES.has(code) || code.startsWith('SQLITE_IOERR'))) return null;
  return new RecordingFileError(output, `cannot write: ${(err as Error).message}`, { cause: err });
}
