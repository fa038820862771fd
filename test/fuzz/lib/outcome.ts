// What the code under test did with one input file, as plain data (it
// crosses from the sandbox's worker), and the property every file target
// checks of it: a result, or the project's error for a bad file — a
// RecordingFileError or an importer's TraceFormatError — whose message
// names the file on one line; never another exception, never a hang, and
// the input file left as it was.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { SandboxAnswer } from './sandbox.ts';

export type Outcome =
  /** `notes`: what the result says besides (a report's scope notes: rows it left out). */
  | { ok: true; notes?: string[] }
  | {
      ok: false;
      /** The error is one of the project's errors for a bad file. */
      fileError: boolean;
      name: string;
      message: string;
      /** The first stack frame in the project's own code (profiler/, app/): where a stray exception came from. */
      where: string | null;
    };

const repo = path.resolve(import.meta.dirname, '../../..');

/** An error thrown by the code under test, as an Outcome; `fileError` says whether it is the project's error for a bad file. */
export function outcomeOf(err: unknown, fileError: (err: unknown) => boolean): Outcome {
  const e = err instanceof Error ? err : new Error(String(err));
  const frames = (e.stack ?? '').split('\n').slice(1);
  const own = frames.find((f) => /\/(profiler|app)\//.test(f) && !f.includes('node_modules'));
  const where = own ? own.trim().replace(/^at /, '').replace(`file://${repo}/`, '').replace(`${repo}/`, '') : null;
  return { ok: false, fileError: fileError(err), name: e.constructor?.name ?? e.name, message: e.message, where };
}

export function sha256(file: string): string {
  return crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

/** Longest message accepted as "clear" (past the file's name): an error that quotes half the input is not. */
const MAX_PROBLEM = 600;

/**
 * What is wrong with how `file` was handled: null when the answer is a
 * result, or a file error naming `file` on one short line, and the file's
 * hash did not change (`unchanged` false: it did).
 */
export function fileProblem(file: string, answer: SandboxAnswer<Outcome>, unchanged: boolean): string | null {
  if (answer.kind === 'hang') return `hang: no answer within ${answer.ms} ms`;
  if (answer.kind === 'died') return `the worker died: ${answer.message}`;
  const problem = outcomeProblem(file, answer.value);
  if (problem) return problem;
  return unchanged ? null : 'the input file was changed';
}

export function outcomeProblem(file: string, o: Outcome): string | null {
  if (o.ok) return null;
  const first = o.message.split('\n')[0]!.slice(0, 300);
  if (!o.fileError) return `${o.name} (not a file error) at ${o.where ?? '?'}: ${first}`;
  if (!o.message.startsWith(`${file}: `)) return `${o.name} does not start with the file's name: ${first}`;
  if (/[\n\r]/.test(o.message)) return `${o.name} is not one line: ${first}`;
  if (o.message.length > file.length + 2 + MAX_PROBLEM) return `${o.name} is ${o.message.length} characters long: ${first}`;
  return null;
}
