// The output-paths target's cases and its property (issue 27): a command
// that writes a file, pointed at an output that is absent, exists, is an
// input (as given, spelled another way, a symbolic or a hard link to it),
// a link elsewhere or to nothing, a directory, in a missing folder; with
// --force or not; alone or two at once; with temporaries of a dead and of
// a live writer beside it. What must hold: each call succeeds or fails
// with one line naming the output; the inputs are byte for byte as they
// were; what was at the output is replaced only where it may be (--force,
// never an input, never a directory); a success leaves a regular file that
// reads; of two writers without --force one at most succeeds; no temporary
// is left but a live writer's, and a dead writer's goes once one got
// through.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { openRecording } from '../../../profiler/store/database.ts';
import { temporaryName } from '../../../profiler/store/output-file.ts';
import type { OutputInput, WritingCommand } from '../handlers/output-paths.ts';
import { outcomeProblem, sha256, type Outcome } from './outcome.ts';
import { Sandbox, type SandboxAnswer } from './sandbox.ts';

const OUTPUT_KINDS = [
  'absent',
  'existing',
  'input',
  'input-spelled-otherwise',
  'symlink-to-input',
  'hardlink-to-input',
  'symlink-elsewhere',
  'dangling-symlink',
  'directory',
  'missing-folder',
] as const;
type OutputKind = (typeof OUTPUT_KINDS)[number];

export interface OutputRecipe {
  command: WritingCommand;
  output: OutputKind;
  force: boolean;
  /** ingest: the stream's directory given, not the stream. */
  directory: boolean;
  race: boolean;
  /** Temporaries beside the output: a dead writer's and a live one's. */
  stale: boolean;
}

export const outputRecipe: fc.Arbitrary<OutputRecipe> = fc.record({
  command: fc.constantFrom<WritingCommand>('export', 'import', 'ingest', 'merge'),
  output: fc.constantFrom(...OUTPUT_KINDS),
  force: fc.boolean(),
  directory: fc.boolean(),
  race: fc.boolean(),
  stale: fc.boolean(),
});

/** The real files each command reads, copied into every case. */
export interface OutputFixtures {
  recording: string;
  trace: string;
  stream: string;
}

export function outputSandbox(): Sandbox<OutputInput, Outcome[]> {
  return new Sandbox(new URL('../handlers/output-paths.ts', import.meta.url), { timeoutMs: 30_000 });
}

/** A process that has ended: its pid names a dead writer's temporaries. */
let deadPid: number | null = null;

/** A case laid out under `dir` (empty): the inputs, and the output as the recipe wants it. */
function materialize(r: OutputRecipe, dir: string, fixtures: OutputFixtures) {
  const copy = (from: string, name: string) => {
    const to = path.join(dir, name);
    fs.copyFileSync(from, to);
    return to;
  };
  let inputs: string[];
  let input: string; // the file an output made to be an input is
  if (r.command === 'import') inputs = [(input = copy(fixtures.trace, 'trace.json'))];
  else if (r.command === 'ingest' && r.directory) {
    fs.mkdirSync(path.join(dir, 'streams'));
    input = copy(fixtures.stream, 'streams/4242.ssr');
    inputs = [path.join(dir, 'streams')];
  } else if (r.command === 'ingest') inputs = [(input = copy(fixtures.stream, '4242.ssr'))];
  else inputs = [(input = copy(fixtures.recording, 'rec.sqlite'))];

  const elsewhere = path.join(dir, 'elsewhere.txt');
  fs.writeFileSync(elsewhere, 'not an output');
  let output = path.join(dir, r.command === 'export' ? 'out.json' : 'out.sqlite');
  switch (r.output) {
    case 'absent':
      break;
    case 'existing':
      fs.writeFileSync(output, 'an existing output');
      break;
    case 'input':
      output = input;
      break;
    case 'input-spelled-otherwise':
      fs.mkdirSync(path.join(dir, 'sub'));
      output = `${dir}/sub/../${path.relative(dir, input)}`;
      break;
    case 'symlink-to-input':
      fs.symlinkSync(input, output);
      break;
    case 'hardlink-to-input':
      fs.linkSync(input, output);
      break;
    case 'symlink-elsewhere':
      fs.symlinkSync(elsewhere, output);
      break;
    case 'dangling-symlink':
      fs.symlinkSync(path.join(dir, 'nothing'), output);
      break;
    case 'directory':
      fs.mkdirSync(output);
      break;
    case 'missing-folder':
      output = path.join(dir, 'missing', path.basename(output));
      break;
  }
  const stale = { dead: [] as string[], live: [] as string[] };
  if (r.stale && r.output !== 'missing-folder') {
    deadPid ??= spawnSync('true').pid!;
    stale.dead = [temporaryName(output, deadPid), `${temporaryName(output, deadPid, 2)}-journal`];
    // The fuzzer's own process runs, and is not the sandbox's: its temporary must stay.
    stale.live = [temporaryName(output, process.pid, 7)];
    for (const f of [...stale.dead, ...stale.live]) fs.writeFileSync(f, 'left by a writer');
  }
  return { inputs, input, output, elsewhere, stale };
}

/** What is at `file`, to tell whether it changed: nothing, a link and where to, a directory, a file and its hash. */
function state(file: string): string {
  const st = fs.lstatSync(file, { throwIfNoEntry: false });
  if (!st) return 'nothing';
  if (st.isSymbolicLink()) return `a link to ${fs.readlinkSync(file)}`;
  if (st.isDirectory()) return 'a directory';
  return `a file ${sha256(file)}`;
}

/** Every file under `dir`, its folders' included. */
function filesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).map((f) => path.join(dir, f));
}

/** Whether the written output reads as what the command writes: a recording, or a Chrome trace. */
function unreadable(r: OutputRecipe, output: string): string | null {
  try {
    if (r.command === 'export') {
      if (!('traceEvents' in (JSON.parse(fs.readFileSync(output, 'utf8')) as object))) return 'no traceEvents';
    } else openRecording(output, { readonly: true }).close();
    return null;
  } catch (err) {
    return (err as Error).message.split('\n')[0]!;
  }
}

/** One case, run in the sandbox: what is wrong with what the command did (null: nothing). */
export async function outputProblem(sandbox: Sandbox<OutputInput, Outcome[]>, r: OutputRecipe, fixtures: OutputFixtures, work: string): Promise<string | null> {
  const dir = fs.mkdtempSync(path.join(work, 'case-'));
  try {
    const c = materialize(r, dir, fixtures);
    const kept = [c.input, c.elsewhere];
    const before = kept.map(sha256);
    const was = state(c.output);
    const answer: SandboxAnswer<Outcome[]> = await sandbox.run({ command: r.command, inputs: c.inputs, output: c.output, force: r.force, race: r.race });
    if (answer.kind === 'hang') return `hang: no answer within ${answer.ms} ms`;
    if (answer.kind === 'died') return `the worker died: ${answer.message}`;
    const outcomes = answer.value;
    for (const o of outcomes) {
      const problem = outcomeProblem(c.output, o);
      if (problem) return problem;
    }
    const changed = kept.filter((f, i) => sha256(f) !== before[i]);
    if (changed.length) return `changed what it must not write: ${changed.map((f) => path.relative(dir, f)).join(', ')}`;

    const succeeded = outcomes.filter((o) => o.ok).length;
    const replaceable = r.output === 'existing' || r.output === 'symlink-elsewhere' || r.output === 'dangling-symlink';
    const mayWrite = r.output === 'absent' || (r.force && replaceable);
    const said = outcomes.find((o) => !o.ok)?.message ?? '';
    if (!mayWrite && succeeded) return `${r.output}${r.force ? ' with --force' : ''}: written, where it must be refused`;
    if (!mayWrite && state(c.output) !== was)
      return `${r.output}${r.force ? ' with --force' : ''}: refused, but the output changed from ${was} to ${state(c.output)}`;
    if (mayWrite && succeeded === 0) return `${r.output}${r.force ? ' with --force' : ''}: refused where it may write: ${said}`;
    if (r.race && !r.force && succeeded > 1) return `two writers without --force: both succeeded`;
    if (succeeded) {
      const st = fs.lstatSync(c.output);
      if (!st.isFile() || st.size === 0) return `succeeded, but the output is ${state(c.output)} of ${st.size} bytes`;
      const problem = unreadable(r, c.output);
      if (problem) return `succeeded, but the output does not read: ${problem}`;
    }

    const left = filesUnder(dir).filter((f) => /\.writing(-journal|-wal|-shm)?$/.test(f));
    const stray = left.filter((f) => !c.stale.live.includes(f));
    if (succeeded && stray.length) return `temporaries left: ${stray.map((f) => path.basename(f)).join(', ')}`;
    if (stray.some((f) => !c.stale.dead.includes(f))) return `its own temporary left: ${stray.map((f) => path.basename(f)).join(', ')}`;
    const gone = c.stale.live.filter((f) => !left.includes(f));
    if (gone.length) return `a running writer's temporary removed: ${gone.map((f) => path.basename(f)).join(', ')}`;
    return null;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
