// The loop every TypeScript fuzz target runs: fast-check generates inputs
// from an arbitrary (real fixtures and what to do to them), a check runs
// one input and says what is wrong with the outcome (null: nothing), for
// `seconds`. Unlike a test, a fuzz run goes on after a failure: each
// failure is shrunk (for a bounded time), saved as a file under a fresh
// artifact folder, and the search starts again from the next seed, until
// time is up. Failures are told apart by a signature (the problem with
// paths, numbers and quoted values taken out), so one defect met a
// thousand times is reported once.
//
// The interface is the one `npm run fuzz` (scripts/fuzz.ts) runs beside
// the native libFuzzer targets: test/fuzz/targets/*.ts each export
// `target: FuzzTarget`.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';

export interface FuzzOptions {
  seconds: number;
  /** fast-check's seed: the same seed generates the same inputs (timing aside). */
  seed?: number;
}

export interface FuzzFailure {
  /** The failing input, saved as a file (the runner copies it into test/fixtures/fuzz/<target>/). */
  input: string;
  error: string;
}

export interface FuzzResult {
  executions: number;
  failures: FuzzFailure[];
}

export interface FuzzTarget {
  name: string;
  run(options: FuzzOptions): Promise<FuzzResult>;
}

export interface FuzzSpec<T> {
  name: string;
  arbitrary: fc.Arbitrary<T>;
  /** Runs one input: what is wrong (one line), or null. */
  check: (input: T) => Promise<string | null>;
  /** Writes the input as the file a regression test replays (in `dir`, named from `stem`); returns its path. */
  save: (input: T, dir: string, stem: string) => string;
  /** Time spent shrinking one failure, at most (each step is an execution). */
  shrinkMs?: number;
}

/** A FuzzSpec's save for inputs that are recipes: the recipe as JSON, replayed from it. */
export function saveJson<T>(r: T, dir: string, stem: string): string {
  const file = path.join(dir, `${stem}.json`);
  fs.writeFileSync(file, JSON.stringify(r, null, 2) + '\n');
  return file;
}

/** Where a run's failing inputs go: STREAMSCOPE_FUZZ_ARTIFACTS/<target>/, else a fresh folder under the system's temp. */
export function artifactDir(name: string): string {
  const root = process.env.STREAMSCOPE_FUZZ_ARTIFACTS;
  if (root) {
    const dir = path.join(root, name);
    fs.mkdirSync(dir, { recursive: true });
    return dir;
  }
  return fs.mkdtempSync(path.join(os.tmpdir(), `ss-fuzz-${name}-`));
}

/**
 * A scratch folder for one run's inputs and outputs: in memory where Linux
 * has /dev/shm (SQLite's fsyncs are most of an import's time on a disk).
 */
export function workDir(name: string): string {
  const shm = '/dev/shm';
  let parent = os.tmpdir();
  try {
    fs.accessSync(shm, fs.constants.W_OK);
    parent = shm;
  } catch {
    // no /dev/shm: the system's temp
  }
  return fs.mkdtempSync(path.join(parent, `ss-fuzz-${name}-work-`));
}

/**
 * What tells two failures apart: the problem without what varies from one
 * input to the next (temporary paths, numbers, quoted values).
 */
export function signature(problem: string): string {
  return (
    problem
      .replace(/\/[^\s:'"]*\/ss-fuzz[^\s:'"]*/g, 'FILE')
      // SQLite names what it did not find or refused last: one defect whatever the column.
      .replace(/: [\w.$]+$/, ': NAME')
      // A generated value quoted without quotes: its characters are not the defect.
      .replace(/[^\x20-\x7e]+/g, '?')
      .replace(/(['"`]).*?\1/g, 'Q')
      .replace(/-?\d+(\.\d+)?(e[+-]?\d+)?/gi, 'N')
      .slice(0, 240)
  );
}

/** STREAMSCOPE_FUZZ_DEBUG=1: one line per execution on stderr (its time, its problem). */
const debug = process.env.STREAMSCOPE_FUZZ_DEBUG === '1';

export async function fuzz<T>(spec: FuzzSpec<T>, options: FuzzOptions): Promise<FuzzResult> {
  const deadline = performance.now() + options.seconds * 1000;
  // STREAMSCOPE_FUZZ_SHRINK_MS: longer for smaller inputs to keep (each shrinking step is an execution).
  const shrinkMs = Number(process.env.STREAMSCOPE_FUZZ_SHRINK_MS) || spec.shrinkMs || Math.min(30_000, options.seconds * 250);
  let dir: string | null = null;
  let executions = 0;
  const failures: FuzzFailure[] = [];
  const seen = new Set<string>();
  let seed = options.seed ?? (Math.random() * 2 ** 31) | 0;

  while (performance.now() < deadline - 50) {
    let first: { at: number; signature: string } | null = null;
    const property = fc.asyncProperty(spec.arbitrary, async (input) => {
      const now = performance.now();
      // Past the deadline (one execution at least: a loaded machine may take the whole run to start the sandbox),
      // or shrinking for too long: pass without running, which ends the search.
      if ((now > deadline && executions > 0) || (first !== null && now - first.at > shrinkMs)) return true;
      executions++;
      const problem = await spec.check(input);
      if (debug) process.stderr.write(`${spec.name} #${executions} ${Math.round(performance.now() - now)} ms${problem ? `: ${problem.slice(0, 160)}` : ''}\n`);
      if (problem === null) return true;
      const sig = signature(problem);
      // A defect already reported is not searched for again; while shrinking,
      // only the defect being shrunk counts (another one would swap the
      // counterexample for an input that fails differently).
      if (seen.has(sig) || (first !== null && first.signature !== sig)) return true;
      first ??= { at: performance.now(), signature: sig };
      throw new FuzzProblem(problem);
    });
    const details = await fc.check(property, {
      seed,
      numRuns: Number.MAX_SAFE_INTEGER,
      // Checked between runs: the first run of a search always starts (the loop's condition held a moment ago).
      plugins: [fc.interruptAfterTimeLimit(Math.max(1, deadline - performance.now()))],
    });
    seed = (seed + 1) | 0;
    if (!details.failed || !details.counterexample) break; // time is up (an interrupted search passes)
    const error = details.errorInstance instanceof FuzzProblem ? details.errorInstance.message : String(details.errorInstance);
    const sig = signature(error);
    seen.add(sig);
    dir ??= artifactDir(spec.name);
    const input = spec.save((details.counterexample as [T])[0], dir, `${spec.name}-${failures.length + 1}-${hash(sig)}`);
    failures.push({ input, error });
  }
  return { executions, failures };
}

class FuzzProblem extends Error {}

function hash(s: string): string {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return (h >>> 0).toString(16).padStart(8, '0');
}
