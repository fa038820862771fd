// The one way StreamScope writes a file the user named — `record -o`,
// `import`, `ingest`, `merge`, `export` and the app's Export… all begin
// with beginOutput — so that no command can lose a file (issue 27):
//
//  - an existing output is replaced only with --force (`overwrite`), and an
//    input never, whatever --force says: the output is compared with every
//    input by device and inode, so a symbolic or a hard link to an input is
//    that input (`export r.sqlite -o r.sqlite` once replaced the recording
//    with its own JSON; `ingest --force -o s.ssr s.ssr` destroyed its
//    stream before reading it);
//  - the file is written as a temporary sibling, created exclusively
//    (O_EXCL) under a name that carries the writer's host and pid, and
//    becomes the output only when whole (`publish`). Without --force by
//    link(2), which fails where a name exists: of two writers racing to one
//    new output, the second is told the output exists, where a rename
//    would silently replace the first's work; with --force by rename(2).
//    Both are atomic: a reader sees the old file or the new one, never
//    part of one, and a failure leaves the output as it was;
//  - temporaries of writers that were killed (kill -9, a power cut, a full
//    disk the writer died of) are removed by the next writer beside the
//    same output, with SQLite's journal of them, once their process is gone
//    from this host. A live process's temporary is never touched.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { getSystemErrorMessage } from 'node:util';
import { RecordingFileError } from './recording-error.ts';

/**
 * A command refused to write its output before writing anything: it
 * exists (without --force), it is an input, it is a directory. Said of
 * the output, in one line; the CLI exits 2 ("could not run").
 */
export class OutputRefusedError extends RecordingFileError {
  constructor(output: string, problem: string) {
    super(output, problem);
    this.name = 'OutputRefusedError';
  }
}

export interface OutputOptions {
  /** Replace an existing output (`--force`). Never an input: that is refused whatever this says. */
  overwrite?: boolean;
  /** The files and directories the command reads. */
  inputs?: readonly string[];
}

/** This host's name as temporaries carry it (a file name's characters only). */
const HOST = os.hostname().replace(/[^\w.-]/g, '_');

/** The journal and WAL files SQLite keeps beside a database: a temporary's, left by a killed writer, go with it. */
const SQLITE_SIDE_FILES = ['-journal', '-wal', '-shm'];

/**
 * The temporary file `pid` on `host` writes `output` through: hidden
 * (a dot first), beside the output so that publishing it is a link or a
 * rename within one file system. `n` tells apart the outputs of one
 * process (threads of the app writing at once).
 */
export function temporaryName(output: string, pid = process.pid, n = 1, host = HOST): string {
  return path.join(path.dirname(output), `.${path.basename(output)}.${pid}-${n}@${host}.writing`);
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Whose temporary `name` (a file beside `output`) is, or null when it is
 * none of ours. Besides this module's names, the ones each command used
 * before it (.NAME.importing-PID, .NAME.merging-PID, .NAME.exporting-PID,
 * NAME.PID.new): what a killed writer of an older version left is removed
 * too. Those carry no host: taken as this host's.
 */
function ownerOf(name: string, output: string): { pid: number; host: string } | null {
  const base = escapeRegExp(path.basename(output));
  const side = `(?:${SQLITE_SIDE_FILES.join('|')})?`;
  const current = new RegExp(`^\\.${base}\\.(\\d+)-\\d+@(.+)\\.writing${side}$`).exec(name);
  if (current) return { pid: Number(current[1]), host: current[2]! };
  const before = new RegExp(`^(?:\\.${base}\\.(?:importing|merging|exporting)-(\\d+)|${base}\\.(\\d+)\\.new)${side}$`).exec(name);
  return before ? { pid: Number(before[1] ?? before[2]), host: HOST } : null;
}

/** Whether process `pid` of this host runs: kill(pid, 0) fails with ESRCH only when there is none (EPERM: another user's, alive). */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/**
 * Removes the temporaries beside `output` whose writer is gone: of this
 * host, of a process that no longer runs. Never this process's own (a
 * thread of it may be writing), never another host's (a shared file
 * system: its processes cannot be seen from here). Returns the names
 * removed; one that cannot be removed is left (it is not in the way: each
 * writer's name is its own).
 */
export function removeStaleTemporaries(output: string): string[] {
  const dir = path.dirname(output);
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const owner = ownerOf(name, output);
    if (!owner || owner.host !== HOST || owner.pid === process.pid || isRunning(owner.pid)) continue;
    try {
      fs.unlinkSync(path.join(dir, name));
      removed.push(name);
    } catch {
      // removed by another writer meanwhile, or not ours to remove
    }
  }
  return removed;
}

interface Identity {
  file: string;
  dev: bigint;
  ino: bigint;
}

/** A file's identity (device and inode, as bigints: an inode number may pass 2^53), following links; null when it cannot be seen. */
function identity(file: string): Identity | null {
  try {
    const st = fs.statSync(file, { bigint: true });
    return { file, dev: st.dev, ino: st.ino };
  } catch {
    return null;
  }
}

function identities(files: readonly string[] = []): Identity[] {
  return files.map(identity).filter((i) => i !== null);
}

/** Whether a name `file` exists at all: a dangling symbolic link does. */
function nameExists(file: string): boolean {
  try {
    fs.lstatSync(file);
    return true;
  } catch {
    return false;
  }
}

const DIRECTORY = 'is a directory: give the name of the file to write';
const EXISTS = 'already exists (use --force to overwrite)';
const KEEPS_INPUTS = 'write to another file (--force never replaces an input)';

/** Why `output` may not be written (null: it may): it is an input, a directory, or exists without `overwrite`. */
function refusal(output: string, inputs: readonly Identity[], overwrite: boolean): string | null {
  if (output.endsWith('/') || output.endsWith(path.sep)) return DIRECTORY;
  let st: fs.BigIntStats | null = null;
  try {
    st = fs.statSync(output, { bigint: true });
  } catch {
    // no such file (or a dangling link, or a path that cannot be followed): nothing of the inputs
  }
  if (st) {
    const { dev, ino } = st;
    const input = inputs.find((i) => i.dev === dev && i.ino === ino);
    if (input) {
      return path.resolve(input.file) === path.resolve(output)
        ? `is also an input: ${KEEPS_INPUTS}`
        : `is the same file as the input ${input.file}: ${KEEPS_INPUTS}`;
    }
    if (st.isDirectory()) return DIRECTORY;
  }
  return !overwrite && (st !== null || nameExists(output)) ? EXISTS : null;
}

/** A system error in words, without the paths Node puts in its message (the temporary's name means nothing to the user). */
function inWords(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  return typeof e.errno === 'number' ? getSystemErrorMessage(e.errno) : e.message;
}

/** Flushed to the disk: published, the file is what a crash right after leaves (the rename is durable only with its data). */
function sync(file: string): void {
  const fd = fs.openSync(file, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * `temp` linked as `output`, failing with EEXIST where a name is there.
 * Where the file system has no hard links (FAT, some network file
 * systems: EPERM, ENOTSUP), an exclusively created placeholder claims the
 * name and the rename fills it: as safe against a race, only a reader may
 * see an empty file for a moment.
 */
function linkNoReplace(temp: string, output: string): void {
  try {
    fs.linkSync(temp, output);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS') throw err;
    fs.closeSync(fs.openSync(output, 'wx'));
    try {
      fs.renameSync(temp, output);
    } catch (renameErr) {
      fs.rmSync(output, { force: true }); // the placeholder, empty: ours
      throw renameErr;
    }
    return;
  }
  try {
    fs.unlinkSync(temp);
  } catch {
    // published all the same; the second name goes with the next writer's sweep, once this process has ended
  }
}

/** Outputs begun by this thread, for temporary names of their own. */
let begun = 0;

/** An output being written: write `temp`, then `publish()` it as `path`, or `discard()` it. */
export class OutputFile {
  /** The output as the user named it: every message names it, never the temporary. */
  readonly path: string;
  /** The temporary file to write: exists (created empty, exclusively) until published or discarded. */
  readonly temp: string;
  /** Whether something was at `path` when the command began. */
  readonly existed: boolean;
  readonly #overwrite: boolean;
  readonly #inputs: Identity[];

  constructor(output: string, opts: OutputOptions = {}) {
    this.path = output;
    this.#overwrite = opts.overwrite ?? false;
    this.#inputs = identities(opts.inputs);
    const problem = refusal(output, this.#inputs, this.#overwrite);
    if (problem) throw new OutputRefusedError(output, problem);
    this.existed = nameExists(output);
    removeStaleTemporaries(output);
    this.temp = this.#create();
  }

  /** The temporary, created exclusively: a name taken (by another thread of this process) is passed over for the next. */
  #create(): string {
    for (;;) {
      const temp = temporaryName(this.path, process.pid, ++begun);
      try {
        fs.closeSync(fs.openSync(temp, 'wx'));
        return temp;
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'EEXIST') continue;
        if (code === 'ENOENT') throw new RecordingFileError(this.path, `cannot create: no such directory ${path.dirname(this.path)}`, { cause: err });
        throw new RecordingFileError(this.path, `cannot create: ${inWords(err)}`, { cause: err });
      }
    }
  }

  /**
   * The temporary becomes the output: with `replace` (default: --force) by
   * rename, replacing what is there (checked again for an input: a link
   * may have been made meanwhile); without, by link, refused where the
   * output exists by now (another writer's, finished first). On failure the
   * temporary is removed and the output is as it was.
   */
  publish(opts: { replace?: boolean } = {}): void {
    const replace = opts.replace ?? this.#overwrite;
    try {
      const problem = refusal(this.path, this.#inputs, replace);
      if (problem)
        throw new OutputRefusedError(this.path, problem === EXISTS ? 'already exists: another command wrote it meanwhile (use --force to overwrite)' : problem);
      sync(this.temp);
      if (replace) fs.renameSync(this.temp, this.path);
      else linkNoReplace(this.temp, this.path);
    } catch (err) {
      this.discard();
      const code = (err as NodeJS.ErrnoException).code;
      if (err instanceof RecordingFileError) throw err;
      if (code === 'EEXIST') throw new OutputRefusedError(this.path, 'already exists: another command wrote it meanwhile (use --force to overwrite)');
      if (code === 'EISDIR') throw new OutputRefusedError(this.path, DIRECTORY);
      throw new RecordingFileError(this.path, `cannot write: ${inWords(err)}`, { cause: err });
    }
    // The new name, durable: best effort (some file systems cannot sync a directory).
    try {
      sync(path.dirname(this.path));
    } catch {
      // the file is published either way
    }
  }

  /** Back to an empty file, its SQLite journal gone: for a writer that starts over (merge, in SQL after the pages failed). */
  empty(): void {
    for (const side of SQLITE_SIDE_FILES) fs.rmSync(this.temp + side, { force: true });
    fs.truncateSync(this.temp, 0);
  }

  /** Removes the temporary and SQLite's files beside it; the output is untouched. Safe to call twice. */
  discard(): void {
    for (const f of [this.temp, ...SQLITE_SIDE_FILES.map((s) => this.temp + s)]) fs.rmSync(f, { force: true });
  }
}

/**
 * Refuses `output` as beginOutput would (OutputRefusedError), creating
 * nothing: for a command that reads a while before it writes, so that it
 * says so before reading.
 */
export function checkOutput(output: string, opts: OutputOptions = {}): void {
  const problem = refusal(output, identities(opts.inputs), opts.overwrite ?? false);
  if (problem) throw new OutputRefusedError(output, problem);
}

/**
 * Begins writing `output`: refuses it (OutputRefusedError) where it is an
 * input, a directory, or exists without `overwrite`; removes temporaries
 * of dead writers beside it; creates the temporary to write.
 */
export function beginOutput(output: string, opts: OutputOptions = {}): OutputFile {
  return new OutputFile(output, opts);
}
