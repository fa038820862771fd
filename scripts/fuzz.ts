// `npm run fuzz -- --seconds N [--target NAME]... [--seed N]`: every fuzz
// target for its share of N seconds, one after the other, then one table:
// executions, executions per second and crashes per target. Exit 1 on any
// crash, naming where its input was kept.
//
//  native  libFuzzer targets of native/fuzz (its README says what each
//          feeds), built with ASan and UBSan by native/fuzz/build.sh (run
//          here first; incremental). Each runs with -max_total_time on
//          three corpus folders: native/fuzz/build/corpus/<target> (what
//          libFuzzer found so far, kept between runs), seeds written for
//          this run (native/fuzz/build/seeds/<target>: the real streams of
//          test/fixtures/streams, the synthetic stream tool's, and each
//          cut into pieces of a few KiB that keep the header) and the
//          committed regression inputs (test/fixtures/fuzz/<target>).
//          A crashing input is copied into test/fixtures/fuzz/<target>/,
//          where `npm test` replays it (test/addon/fuzz-regression.test.ts);
//          libFuzzer's report is in native/fuzz/build/logs/<target>.log.
//  js      property-based targets in test/fuzz/targets/*.ts, each module
//          exporting `target = { name, run({ seconds, seed }) }` resolving
//          to `{ executions, failures: { input, error }[] }`, `input` the
//          file the target saved a failing input as: copied into
//          test/fixtures/fuzz/<name>/ for that target's regression test.
//
// --seed makes the JS targets' runs repeatable (native runs take theirs
// from libFuzzer, printed in their logs). The load average is printed
// before and after: the machine may be shared, and executions per second
// are only comparable at a similar load.
import { execFileSync, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const fuzzDir = path.join(repoRoot, 'native/fuzz');
const fuzzBuild = path.join(fuzzDir, 'build');
const regressionRoot = path.join(repoRoot, 'test/fixtures/fuzz');
const jsTargetsDir = path.join(repoRoot, 'test/fuzz/targets');
const syntheticTool = path.join(repoRoot, 'native/build/collector/streamscope-synthetic-stream');

interface NativeTarget {
  name: string;
  /** libFuzzer's -max_len: the ingest's cost grows with the input, the decoder's barely. */
  maxLen: number;
  /** Seeded with real record streams (the round trip's input is a program, not a stream). */
  streamSeeds: boolean;
}

/** The libFuzzer targets of native/fuzz/CMakeLists.txt; native/fuzz/README.md says what each feeds. */
export const NATIVE_TARGETS: NativeTarget[] = [
  { name: 'record-decoding', maxLen: 65536, streamSeeds: true },
  { name: 'ingest', maxLen: 32768, streamSeeds: true },
  { name: 'record-round-trip', maxLen: 16384, streamSeeds: false },
];

interface JsTarget {
  name: string;
  run(options: { seconds: number; seed?: number }): Promise<{ executions: number; failures: { input: string; error: string }[] }>;
}

interface Outcome {
  name: string;
  kind: 'native' | 'js';
  executions: number;
  seconds: number;
  crashes: number;
  /** Per crash: what it was and where its input is. */
  notes: string[];
}

/** The libFuzzer binary of a native target (built by native/fuzz/build.sh). */
export function nativeTargetPath(name: string): string {
  return path.join(fuzzBuild, name);
}

/** libFuzzer's -print_final_stats=1 lines: `stat::number_of_executed_units: 1234`. */
export function libFuzzerStats(log: string): Map<string, number> {
  const stats = new Map<string, number>();
  for (const m of log.matchAll(/^stat::(\w+):\s+(\d+)/gm)) stats.set(m[1]!, Number(m[2]));
  return stats;
}

/** Where libFuzzer wrote the input that crashed (or ran out of memory or time), if it did. */
export function libFuzzerArtifacts(log: string): string[] {
  return [...log.matchAll(/Test unit written to (\S+)/g)].map((m) => m[1]!);
}

// ---- seeds ---------------------------------------------------------------------------------------------------

const HEADER_BYTES = 64; // rs::FileHeader

/**
 * A stream cut into pieces of at most `pieceBytes` of whole records (a
 * larger record alone), each behind the stream's header: small inputs that
 * still hold every kind of record the stream has, so that the fuzzer
 * mutates records rather than spends its time on a 180 KB file.
 */
export function streamPieces(stream: Buffer, pieceBytes = 4096): Buffer[] {
  if (stream.length < HEADER_BYTES) return [];
  const headerBytes = stream.readUInt32LE(12);
  if (headerBytes < HEADER_BYTES || headerBytes > stream.length) return [];
  const header = stream.subarray(0, headerBytes);
  const pieces: Buffer[] = [];
  let from = headerBytes;
  let at = headerBytes;
  while (stream.length - at >= 8) {
    const size = stream.readUInt32LE(at + 4);
    if (size < 8 || size % 8 !== 0 || size > stream.length - at) break;
    if (at + size - from > pieceBytes && at > from) {
      pieces.push(Buffer.concat([header, stream.subarray(from, at)]));
      from = at;
    }
    at += size;
  }
  if (at > from) pieces.push(Buffer.concat([header, stream.subarray(from, at)]));
  return pieces;
}

/** The seed streams of this run: the real ones and the synthetic tool's, whole and in pieces. */
function writeStreamSeeds(dir: string): number {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const streams: string[] = [];
  const real = path.join(repoRoot, 'test/fixtures/streams');
  for (const f of fs.readdirSync(real).sort()) if (f.endsWith('.ssr')) streams.push(path.join(real, f));
  const synthetic: [string, string[]][] = [
    ['synthetic', []],
    ['synthetic-no-end', ['--no-end']],
    ['synthetic-rank', ['--env', 'OMPI_COMM_WORLD_RANK=3', '--env', 'OMPI_COMM_WORLD_SIZE=4', '--pid', '77']],
    ['bench', ['--bench-launches', '300']],
    ['bench-shifted', ['--bench-launches', '40', '--origin-ns', '1763800000000500000', '--pid', '9']],
  ];
  for (const [name, args] of synthetic) {
    const out = path.join(dir, `${name}.ssr`);
    execFileSync(syntheticTool, ['--out', out, ...args]);
    streams.push(out);
  }
  let n = 0;
  for (const file of streams) {
    const bytes = fs.readFileSync(file);
    const base = path.basename(file, '.ssr');
    if (!file.startsWith(dir)) fs.writeFileSync(path.join(dir, `${base}.ssr`), bytes);
    n++;
    streamPieces(bytes).forEach((piece, i) => {
      fs.writeFileSync(path.join(dir, `${base}-piece${i}.ssr`), piece);
      n++;
    });
  }
  return n;
}

// ---- native targets --------------------------------------------------------------------------------------------

function runNative(target: NativeTarget, seconds: number): Outcome {
  const corpus = path.join(fuzzBuild, 'corpus', target.name);
  const seeds = path.join(fuzzBuild, 'seeds', target.name);
  const crashes = path.join(fuzzBuild, 'crashes', target.name);
  const regression = path.join(regressionRoot, target.name);
  const logs = path.join(fuzzBuild, 'logs');
  for (const d of [corpus, crashes, regression, logs]) fs.mkdirSync(d, { recursive: true });
  if (target.streamSeeds) writeStreamSeeds(seeds);
  else fs.mkdirSync(seeds, { recursive: true });

  const log = path.join(logs, `${target.name}.log`);
  const fd = fs.openSync(log, 'w');
  const started = Date.now();
  const result = spawnSync(
    nativeTargetPath(target.name),
    [
      `-max_total_time=${Math.max(1, Math.round(seconds))}`,
      `-max_len=${target.maxLen}`,
      '-timeout=10', // one input slower than this is a hang
      '-rss_limit_mb=2048',
      '-print_final_stats=1',
      `-artifact_prefix=${crashes}/`,
      corpus,
      seeds,
      regression,
    ],
    {
      cwd: repoRoot,
      stdio: ['ignore', fd, fd],
      env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1', UBSAN_OPTIONS: 'print_stacktrace=1:halt_on_error=1' },
    },
  );
  fs.closeSync(fd);
  const elapsed = (Date.now() - started) / 1000;
  const text = fs.readFileSync(log, 'utf8');
  const stats = libFuzzerStats(text);
  const outcome: Outcome = {
    name: target.name,
    kind: 'native',
    executions: stats.get('number_of_executed_units') ?? 0,
    seconds: elapsed,
    crashes: 0,
    notes: [],
  };
  for (const artifact of libFuzzerArtifacts(text)) {
    const kept = path.join(regression, path.basename(artifact));
    fs.copyFileSync(artifact, kept);
    const what = /^SUMMARY: (.*)$/m.exec(text)?.[1] ?? /==\d+== ERROR: (.*)$/m.exec(text)?.[1] ?? path.basename(artifact).split('-')[0]!;
    outcome.crashes++;
    outcome.notes.push(
      `${target.name}: ${what}\n  input kept as ${path.relative(repoRoot, kept)} (replayed by npm test)\n` +
        `  reproduce: ${path.relative(repoRoot, nativeTargetPath(target.name))} ${path.relative(repoRoot, kept)}\n` +
        `  libFuzzer's report: ${path.relative(repoRoot, log)}`,
    );
  }
  if (outcome.crashes === 0 && result.status !== 0) {
    // It stopped without an input to blame: the target itself is broken (a bad option, a missing template).
    outcome.crashes++;
    outcome.notes.push(
      `${target.name}: exited with ${result.status ?? result.signal} without a crashing input; see ${path.relative(repoRoot, log)}:\n${text.slice(-2000)}`,
    );
  }
  return outcome;
}

// ---- JS targets ------------------------------------------------------------------------------------------------

async function jsTargets(): Promise<{ file: string; target: JsTarget }[]> {
  if (!fs.existsSync(jsTargetsDir)) return [];
  const found: { file: string; target: JsTarget }[] = [];
  for (const f of fs.readdirSync(jsTargetsDir).sort()) {
    if (!f.endsWith('.ts') || f.endsWith('.test.ts') || f.endsWith('.d.ts')) continue;
    const file = path.join(jsTargetsDir, f);
    const mod = (await import(pathToFileURL(file).href)) as { target?: JsTarget };
    if (mod.target && typeof mod.target.name === 'string' && typeof mod.target.run === 'function') found.push({ file, target: mod.target });
  }
  return found;
}

async function runJs(target: JsTarget, seconds: number, seed: number): Promise<Outcome> {
  const started = Date.now();
  const outcome: Outcome = { name: target.name, kind: 'js', executions: 0, seconds: 0, crashes: 0, notes: [] };
  try {
    const result = await target.run({ seconds, seed });
    outcome.executions = result.executions;
    for (const failure of result.failures) {
      const dir = path.join(regressionRoot, target.name);
      fs.mkdirSync(dir, { recursive: true });
      // `input` is the file the target saved the failing input as (test/fuzz/lib/harness.ts); anything else is kept as JSON.
      const isFile = path.isAbsolute(failure.input) && fs.existsSync(failure.input) && fs.statSync(failure.input).isFile();
      const kept = path.join(dir, isFile ? path.basename(failure.input) : `${crypto.createHash('sha1').update(failure.input).digest('hex').slice(0, 16)}.json`);
      if (isFile) fs.copyFileSync(failure.input, kept);
      else fs.writeFileSync(kept, JSON.stringify(failure, null, 2) + '\n');
      outcome.crashes++;
      outcome.notes.push(`${target.name}: ${failure.error.split('\n')[0]}\n  input kept as ${path.relative(repoRoot, kept)} (seed ${seed})`);
    }
  } catch (err) {
    outcome.crashes++;
    outcome.notes.push(`${target.name}: the target itself threw (seed ${seed}): ${(err as Error).stack ?? String(err)}`);
  }
  outcome.seconds = (Date.now() - started) / 1000;
  return outcome;
}

// ---- the run ---------------------------------------------------------------------------------------------------

function table(outcomes: Outcome[]): string {
  const rows = [
    ['target', 'kind', 'executions', 'exec/s', 'crashes'],
    ...outcomes.map((o) => [
      o.name,
      o.kind,
      o.executions.toLocaleString('en-US'),
      Math.round(o.executions / Math.max(o.seconds, 0.001)).toLocaleString('en-US'),
      String(o.crashes),
    ]),
  ];
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows.map((r) => r.map((cell, c) => (c < 2 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ')).join('\n');
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      seconds: { type: 'string', default: '60' },
      target: { type: 'string', multiple: true },
      seed: { type: 'string' },
    },
    strict: true,
  });
  const seconds = Number(values.seconds);
  if (!Number.isFinite(seconds) || seconds <= 0) throw new Error(`--seconds must be a positive number, not '${values.seconds}'`);
  const seed = values.seed !== undefined ? Number(values.seed) : crypto.randomInt(2 ** 31);

  const js = await jsTargets();
  const known = [...NATIVE_TARGETS.map((t) => t.name), ...js.map((j) => j.target.name)];
  const wanted = values.target ?? known;
  const unknown = wanted.filter((t) => !known.includes(t));
  if (unknown.length) throw new Error(`no fuzz target ${unknown.join(', ')} (targets: ${known.join(', ')})`);
  const native = NATIVE_TARGETS.filter((t) => wanted.includes(t.name));
  const jsWanted = js.filter((j) => wanted.includes(j.target.name));
  const share = seconds / (native.length + jsWanted.length);

  if (native.length) {
    execFileSync('bash', [path.join(fuzzDir, 'build.sh')], { stdio: 'inherit' });
    if (native.some((t) => t.streamSeeds) && !fs.existsSync(syntheticTool))
      execFileSync('bash', [path.join(repoRoot, 'native/build.sh')], { stdio: 'inherit' });
  }
  const load = () =>
    os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ');
  console.log(
    `fuzz: ${wanted.length} target${wanted.length === 1 ? '' : 's'}, ${share.toFixed(0)} s each; ${os.cpus().length} cores, load average ${load()}; JS seed ${seed}`,
  );
  if (js.length === 0) console.log(`fuzz: no JavaScript targets in ${path.relative(repoRoot, jsTargetsDir)}/`);

  const outcomes: Outcome[] = [];
  for (const t of native) {
    console.log(`fuzz: ${t.name} (native, ${share.toFixed(0)} s)…`);
    outcomes.push(runNative(t, share));
  }
  for (const { target } of jsWanted) {
    console.log(`fuzz: ${target.name} (js, ${share.toFixed(0)} s)…`);
    outcomes.push(await runJs(target, share, seed));
  }
  console.log(`\n${table(outcomes)}\n\nload average after: ${load()}`);
  const notes = outcomes.flatMap((o) => o.notes);
  if (notes.length) {
    console.log(`\n${notes.length} crash${notes.length === 1 ? '' : 'es'}:\n${notes.join('\n')}`);
    return 1;
  }
  return 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      console.error(`fuzz: ${(err as Error).message}`);
      process.exit(2);
    },
  );
}
