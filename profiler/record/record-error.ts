// A problem that stops a recording before or while it runs, phrased for the
// user: what is wrong and, where we know it, what to do.
export class RecordError extends Error {
  /** Exit code for the CLI. */
  readonly exitCode: number;
  constructor(message: string, exitCode = 1) {
    super(message);
    this.name = 'RecordError';
    this.exitCode = exitCode;
  }
}
