// `npm run bench -- --only startup` (or `node bench/startup.ts [--rounds N]`):
// each command's own start (issue 30), side by side in one run. Every round
// runs, one after another in this order, each a process of its own timed
// from spawn to exit:
//
//   bare        node -e 0: Node's own start, the floor;
//   help        streamscope --help           through the bundle, then the sources;
//   report      streamscope report --json test/fixtures/recordings/normalise-concurrent.sqlite
//                                            through the bundle, then the sources;
//   alone       the bundle run directly (node app/dist/streamscope-cli.cjs): no
//               stamp check, no source maps, no compile cache, for comparison.
//
// `streamscope` is the command package.json's "bin" and `npm run streamscope`
// run, profiler/cli/streamscope.sh (which starts Node, this one, on
// profiler/cli/launch.cjs), forced one way with STREAMSCOPE_CLI=bundle
// (it exits 2 rather than run a stale bundle) or =sources. The bundle is
// built first where it is not current (as `npm run build:app` builds it),
// and again should a source change during the run. One round first, not
// counted, warms the page cache and V8's compile cache beside the bundle.
// Target: each command ≤ 0.1 s above bare Node (the median's difference),
// through the bundle.
import { execFileSync, spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { bundleState } from '../profiler/cli/launch.cjs';
import { repoRoot } from '../profiler/native/paths.ts';
import { median, quantile } from './stats.ts';

const TARGET_MS = 100;
const streamscope = path.join(repoRoot, 'profiler/cli/streamscope.sh');
const launcher = path.join(repoRoot, 'profiler/cli/launch.cjs');
const fixture = 'test/fixtures/recordings/normalise-concurrent.sqlite';

interface Command {
  name: string;
  label: string;
  /** The program (default: this Node) and its arguments. */
  exe?: string;
  argv: string[];
  env?: Record<string, string>;
  /** Measured against the target. */
  target: boolean;
}

const COMMANDS: Command[] = [
  { name: 'bare', label: 'node -e 0 (bare Node)', argv: ['-e', '0'], target: false },
  { name: 'help-bundle', label: 'streamscope --help, bundle', exe: streamscope, argv: ['--help'], env: { STREAMSCOPE_CLI: 'bundle' }, target: true },
  { name: 'help-sources', label: 'streamscope --help, sources', exe: streamscope, argv: ['--help'], env: { STREAMSCOPE_CLI: 'sources' }, target: true },
  {
    name: 'report-bundle',
    label: 'streamscope report --json FIXTURE, bundle',
    exe: streamscope,
    argv: ['report', '--json', fixture],
    env: { STREAMSCOPE_CLI: 'bundle' },
    target: true,
  },
  {
    name: 'report-sources',
    label: 'streamscope report --json FIXTURE, sources',
    exe: streamscope,
    argv: ['report', '--json', fixture],
    env: { STREAMSCOPE_CLI: 'sources' },
    target: true,
  },
  { name: 'help-alone', label: '--help, the bundle alone', argv: ['app/dist/streamscope-cli.cjs', '--help'], target: false },
  {
    name: 'report-alone',
    label: 'report --json FIXTURE, the bundle alone',
    argv: ['app/dist/streamscope-cli.cjs', 'report', '--json', fixture],
    target: false,
  },
];

/** Builds the bundle (`npm run build:app`'s two builds: the first empties app/dist) where it is not current; the seconds it took, or null. */
export function ensureBundle(): number | null {
  if (bundleState(repoRoot).current) return null;
  const t = performance.now();
  const vite = path.join(repoRoot, 'node_modules/vite/bin/vite.js');
  execFileSync(process.execPath, [vite, 'build', '-c', 'app/vite.config.ts'], { cwd: repoRoot, stdio: 'pipe' });
  execFileSync(process.execPath, [vite, 'build', '-c', 'app/vite.config.ts', '--mode', 'preload'], { cwd: repoRoot, stdio: 'pipe' });
  const state = bundleState(repoRoot);
  if (!state.current) throw new Error(`the bundle just built is not current: ${state.reason}`);
  return (performance.now() - t) / 1000;
}

/** One run: wall ms from spawn to exit, and its output (checked). */
function runOnce(c: Command): { ms: number; stdout: string } {
  const t = performance.now();
  const r = spawnSync(c.exe ?? process.execPath, c.argv, {
    cwd: repoRoot,
    encoding: 'utf8',
    // The script finds `node` on the PATH, as under npm: this one.
    env: { ...process.env, PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH}`, STREAMSCOPE_CLI: '', ...c.env },
    maxBuffer: 64 << 20,
  });
  const ms = performance.now() - t;
  if (r.status !== 0) throw new Error(`${c.label}: exit ${r.status}: ${r.stderr}`);
  return { ms, stdout: r.stdout };
}

/** The launcher's stamp check alone, in a fresh process (its require included), ms. */
function stampCheckMs(): { ms: number; files: number } {
  const code = `const t=process.hrtime.bigint();const s=require(${JSON.stringify(launcher)}).bundleState(${JSON.stringify(repoRoot)});const ms=Number(process.hrtime.bigint()-t)/1e6;if(!s.current)process.exit(3);process.stdout.write(String(ms)+' '+require(${JSON.stringify(path.join(repoRoot, 'app/dist/streamscope-cli.stamp.json'))}).files.length)`;
  const out = execFileSync(process.execPath, ['-e', code], { encoding: 'utf8' });
  const [ms, files] = out.split(' ').map(Number);
  return { ms: ms!, files: files! };
}

export function gitState(): { commit: string; changedFiles: number } {
  const git = (args: string[]) => execFileSync('git', args, { cwd: repoRoot, encoding: 'utf8' }).trim();
  try {
    const commit = git(['rev-parse', '--short', 'HEAD']);
    const changedFiles = git(['status', '--porcelain', '--untracked-files=no']).split('\n').filter(Boolean).length;
    return { commit, changedFiles };
  } catch {
    return { commit: 'unknown', changedFiles: 0 };
  }
}

export function benchStartup(rounds: number): { result: Record<string, unknown>; lines: string[] } {
  const git = gitState();
  const loadBefore = os.loadavg();
  const builds: number[] = [];
  const built = ensureBundle();
  if (built !== null) builds.push(built);
  const ms = new Map<string, number[]>(COMMANDS.map((c) => [c.name, []]));
  const check: number[] = [];
  let files = 0;
  for (let round = -1; round < rounds; round++) {
    const rebuilt = ensureBundle();
    if (rebuilt !== null) builds.push(rebuilt);
    const outputs = new Map<string, string>();
    for (const c of COMMANDS) {
      const r = runOnce(c);
      outputs.set(c.name, r.stdout);
      if (round >= 0) ms.get(c.name)!.push(r.ms);
    }
    // The bundle says what the sources say.
    for (const what of ['help', 'report']) {
      if (outputs.get(`${what}-bundle`) !== outputs.get(`${what}-sources`)) throw new Error(`${what}: the bundle's output differs from the sources'`);
    }
    if (round >= 0) {
      const s = stampCheckMs();
      check.push(s.ms);
      files = s.files;
    }
  }
  const loadAfter = os.loadavg();
  const bare = median(ms.get('bare')!);
  const rows = COMMANDS.map((c) => {
    const xs = ms.get(c.name)!;
    const m = median(xs);
    const above = c.name === 'bare' ? null : m - bare;
    return { name: c.name, label: c.label, medianMs: m, p90Ms: quantile(xs, 0.9), minMs: Math.min(...xs), aboveBareMs: above, samplesMs: xs, target: c.target };
  });
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  const machine = `${cpu} × ${os.cpus().length}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ${os.hostname()}`;
  const fmtLoad = (l: number[]) => l.map((x) => x.toFixed(2)).join(' ');
  const lines = [
    `startup  each command's own start (issue 30), ${rounds} rounds alternating, one process each, median wall from spawn to exit; target ≤ ${TARGET_MS} ms above bare Node, through the bundle`,
    `         ${machine}; Node ${process.version}; load ${fmtLoad(loadBefore)} → ${fmtLoad(loadAfter)}; commit ${git.commit}${git.changedFiles ? ` (+${git.changedFiles} tracked files changed)` : ''}; warm cache (one round first, not counted)` +
      (builds.length ? `; the bundle built ${builds.length}× (${builds.map((b) => b.toFixed(1)).join(', ')} s)` : '; the bundle current'),
    `         ${'command'.padEnd(44)} ${'median'.padStart(8)} ${'p90'.padStart(8)} ${'above bare'.padStart(11)}  target`,
  ];
  for (const r of rows) {
    const verdict = !r.target ? '' : r.aboveBareMs! <= TARGET_MS ? 'met' : 'not met';
    lines.push(
      `         ${r.label.padEnd(44)} ${`${r.medianMs.toFixed(0)} ms`.padStart(8)} ${`${r.p90Ms.toFixed(0)} ms`.padStart(8)} ${(r.aboveBareMs === null ? '—' : `+${r.aboveBareMs.toFixed(0)} ms`).padStart(11)}  ${verdict}`.trimEnd(),
    );
  }
  lines.push(
    `         FIXTURE: ${fixture}; the launcher's stamp check (${files} files stat'ed, in a fresh process) ${median(check).toFixed(1)} ms median; ` +
      `"the bundle alone": node app/dist/streamscope-cli.cjs, no stamp check, source maps or compile cache`,
  );
  const result = {
    rounds,
    targetMsAboveBare: TARGET_MS,
    machine: { cpu, cores: os.cpus().length, memGiB: os.totalmem() / 2 ** 30, host: os.hostname(), node: process.version },
    loadavg: { before: loadBefore, after: loadAfter },
    commit: git.commit,
    trackedFilesChanged: git.changedFiles,
    cache: 'warm: one round first, not counted (page cache, V8 compile cache beside the bundle)',
    fixture,
    bundleBuilds: builds,
    stampCheck: { files, medianMs: median(check) },
    commands: rows,
    met: rows.filter((r) => r.target && r.name.endsWith('-bundle')).every((r) => r.aboveBareMs! <= TARGET_MS),
  };
  return { result, lines };
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  const { values } = parseArgs({ options: { rounds: { type: 'string', default: '20' } } });
  const r = benchStartup(Number(values.rounds));
  process.stdout.write(r.lines.join('\n') + '\n');
}
