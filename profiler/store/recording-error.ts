// One error type for every problem with a file the user gave us: the message
// always starts with the file's path, then says what is wrong with it.
export class RecordingFileError extends Error {
  readonly file: string;
  readonly problem: string;
  constructor(file: string, problem: string, options?: { cause?: unknown }) {
    super(`${file}: ${problem}`, options);
    this.name = 'RecordingFileError';
    this.file = file;
    this.problem = problem;
  }
}
