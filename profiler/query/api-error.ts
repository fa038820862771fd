// The errors the API rejects with (api.ts ApiErrorShape), and how problems
// with a recording file become one of its codes. The renderer shows a
// distinct message per code, so the mapping must be by cause, not by
// wording: store errors carry their cause in `problem`, SQLite errors in
// their `code` (SQLITE_BUSY, SQLITE_CORRUPT, ...).
import { oneLine, RecordingFileError } from '../store/recording-error.ts';
import { malformedRowError } from '../store/row-checks.ts';
import type { ApiErrorCode, ApiErrorShape } from '../contract/api.ts';

/** An error the renderer shows by code. Serialises to ApiErrorShape. */
export class ApiError extends Error {
  readonly code: ApiErrorCode;
  readonly file?: string;
  constructor(code: ApiErrorCode, message: string, file?: string) {
    // One line, whatever a value quoted in it holds: a job id or a
    // recording id with a line break in it made a message of two lines
    // (found by fuzzing the API).
    super(oneLine(message, 2000));
    this.name = 'ApiError';
    this.code = code;
    this.file = file;
  }
  toJSON(): ApiErrorShape {
    return { code: this.code, message: this.message, ...(this.file !== undefined ? { file: this.file } : {}) };
  }
}

/** SQLite result codes (better-sqlite3's SqliteError.code) → API codes. */
const SQLITE_CODES: Record<string, ApiErrorCode> = {
  SQLITE_BUSY: 'locked',
  SQLITE_LOCKED: 'locked',
  SQLITE_CORRUPT: 'corrupt',
  SQLITE_NOTADB: 'not-a-recording',
  SQLITE_IOERR_SHORT_READ: 'corrupt', // the file ends before a page it says it has
};

/**
 * SQLite messages (sqlite3_errstr) of the causes the renderer tells apart,
 * for errors that come without a code: the native addon reads recordings
 * through its own connection and reports SQLite's message only.
 */
const SQLITE_MESSAGES: [RegExp, string][] = [
  [/database disk image is malformed/, 'SQLITE_CORRUPT'],
  [/database is locked/, 'SQLITE_BUSY'],
  [/file is not a database/, 'SQLITE_NOTADB'],
];

function sqliteCodeOf(err: unknown): string | null {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && code.startsWith('SQLITE_')) return code;
  const message = err instanceof Error ? err.message : '';
  return SQLITE_MESSAGES.find(([re]) => re.test(message))?.[1] ?? null;
}

/** Which API code a store problem is (openRecording's messages, database.ts). */
export function codeOfProblem(problem: string): ApiErrorCode {
  const p = problem.toLowerCase();
  if (p.startsWith('no such file') || p.includes('enoent')) return 'not-found';
  if (p.includes('newer streamscope')) return 'newer-schema';
  if (p.includes('locked')) return 'locked';
  if (/corrupt|truncated|malformed/.test(p)) return 'corrupt';
  return 'not-a-recording';
}

/**
 * Any thrown value → ApiError. `file` names the recording a query was about
 * when the error itself does not (a SQLite error met mid-query).
 */
export function apiErrorOf(err: unknown, file?: string): ApiError {
  if (err instanceof ApiError) return err;
  // A shape that came back from the query thread, where the class did not survive the structured clone.
  if (err && typeof err === 'object' && !(err instanceof Error)) {
    const e = err as { code?: unknown; message?: unknown; file?: unknown };
    if (isApiErrorCode(e.code))
      return new ApiError(e.code, typeof e.message === 'string' ? e.message : String(err), typeof e.file === 'string' ? e.file : file);
  }
  // A row the column loader refused (store/row-checks.ts): the file's error, as `report` says it.
  const fileError = err instanceof RecordingFileError ? err : malformedRowError(err);
  if (fileError) return new ApiError(codeOfProblem(fileError.problem), fileError.message, fileError.file);
  const sqlite = sqliteCodeOf(err);
  if (sqlite) {
    const code = SQLITE_CODES[sqlite] ?? (sqlite.startsWith('SQLITE_IOERR') ? 'corrupt' : 'internal');
    const what =
      code === 'locked'
        ? 'the recording is locked by another process (is it still being written?)'
        : code === 'corrupt'
          ? 'the recording is corrupt or truncated'
          : 'cannot read the recording';
    // The native addon's messages already start with the file.
    const raw = err instanceof Error ? err.message : String(err);
    const detail = file && raw.startsWith(`${file}: `) ? raw.slice(file.length + 2) : raw;
    const message = `${what}: ${detail}`;
    return new ApiError(code, file ? `${file}: ${message}` : message, file);
  }
  return new ApiError('internal', err instanceof Error ? err.message : String(err), file);
}

export const API_ERROR_CODES = [
  'not-found',
  'not-a-recording',
  'newer-schema',
  'locked',
  'corrupt',
  'no-gpu',
  'bad-request',
  'forbidden',
  'busy',
  'internal',
] as const satisfies readonly ApiErrorCode[];

function isApiErrorCode(v: unknown): v is ApiErrorCode {
  return typeof v === 'string' && (API_ERROR_CODES as readonly string[]).includes(v);
}

/**
 * Any thrown value → the plain shape that crosses IPC or HTTP. A value that
 * already carries an API code keeps it: besides ApiError, that is a shape
 * that came back from a query worker, where the class did not survive the
 * structured clone.
 */
export function toApiErrorShape(err: unknown, file?: string): ApiErrorShape {
  if (err && typeof err === 'object' && !(err instanceof ApiError)) {
    const e = err as { code?: unknown; message?: unknown; file?: unknown };
    if (isApiErrorCode(e.code)) {
      const f = typeof e.file === 'string' ? e.file : file;
      return { code: e.code, message: typeof e.message === 'string' ? e.message : String(err), ...(f !== undefined ? { file: f } : {}) };
    }
  }
  return apiErrorOf(err, file).toJSON();
}
