// `npm run bench -- --only import-many` (or `node bench/import-many.ts
// [--ranks 64] [--rounds 3]`): a job's Kineto traces imported by one
// `streamscope import` command against one command per trace, side by side in
// one run (issue 29: 64 small traces cost 64 CLI start-ups).
//
// The traces: test/fixtures/kineto/job's two real ranks of a DDP job on an
// H200, replicated to --ranks ranks by bench/hta.ts's generateHtaJob (the HTA
// bench's very job): rank r is real rank r mod 2 with distributedInfo's rank,
// world size and process group rewritten, its pid (and main thread's tid)
// 528 + r, its trace_id its own, its events one a line without blanks
// (~1.7 MB a rank); timestamps kept (every rank on the real job's one clock:
// a host's clock offset matters to merge, not to what an import costs).
//
// Each round, in alternating order, each a process of its own (or 64) run
// through `streamscope` (profiler/cli/launch.cjs, forced to the bundle, built
// first where it is not current), wall time from spawn to exit:
//
//   many        streamscope import DIR/rank*.json -o OUT   (one command, worker threads: one per core)
//   many, 1     the same with --workers 0                   (one command, one trace after the other)
//   one each    streamscope import DIR/rankN.json -o OUT/rankN.sqlite, for each trace in turn
//
// Every file is read once first (warm cache), and each run's recordings are
// checked (all there, exit 0) and removed before the next.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { repoRoot } from '../profiler/native/paths.ts';
import { generateHtaJob } from './hta.ts';
import { ensureBundle, gitState } from './startup.ts';
import { median } from './stats.ts';

const launcher = path.join(repoRoot, 'profiler/cli/launch.cjs');

function streamscope(args: string[]): number {
  const t = performance.now();
  const r = spawnSync(process.execPath, [launcher, ...args], { encoding: 'utf8', env: { ...process.env, STREAMSCOPE_CLI: 'bundle' } });
  if (r.status !== 0) throw new Error(`streamscope ${args.join(' ')}: exit ${r.status}\n${r.stderr}`);
  return (performance.now() - t) / 1000;
}

type Way = 'many' | 'many-1' | 'each';
const LABEL: Record<Way, string> = {
  many: 'one command, worker threads',
  'many-1': 'one command, --workers 0',
  each: 'one command per trace',
};

export function benchImportMany(opts: { ranks: number; rounds: number }): { result: Record<string, unknown>; lines: string[] } {
  const git = gitState();
  const built = ensureBundle();
  const root = path.join(os.tmpdir(), 'streamscope-bench-import-many');
  const dir = path.join(root, 'traces');
  const { bytes } = generateHtaJob(dir, opts.ranks, 0);
  const traces = Array.from({ length: opts.ranks }, (_, r) => path.join(dir, `rank${r}.json`));
  for (const t of traces) fs.readFileSync(t);
  const workers = os.availableParallelism();
  const out = path.join(root, 'out');
  const runs: Record<Way, number[]> = { many: [], 'many-1': [], each: [] };
  const loadBefore = os.loadavg();
  const run = (way: Way): number => {
    fs.rmSync(out, { recursive: true, force: true });
    let s: number;
    if (way === 'each') {
      fs.mkdirSync(out);
      s = traces.reduce((sum, t) => sum + streamscope(['import', t, '-o', path.join(out, path.basename(t).replace(/\.json$/, '.sqlite'))]), 0);
    } else {
      s = streamscope(['import', ...traces, '-o', out, ...(way === 'many-1' ? ['--workers', '0'] : [])]);
    }
    const written = fs.readdirSync(out).filter((f) => f.endsWith('.sqlite')).length;
    if (written !== traces.length) throw new Error(`${LABEL[way]}: ${written} recordings of ${traces.length}`);
    return s;
  };
  const order: Way[] = ['many', 'each', 'many-1'];
  for (let round = 0; round < opts.rounds; round++) {
    for (const way of round % 2 === 0 ? order : [...order].reverse()) runs[way].push(run(way));
  }
  const loadAfter = os.loadavg();
  fs.rmSync(out, { recursive: true, force: true });
  const med = (w: Way) => median(runs[w]);
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  const machine = `${cpu} × ${os.cpus().length}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ${os.hostname()}`;
  const fmtLoad = (l: number[]) => l.map((x) => x.toFixed(2)).join(' ');
  const mb = bytes / opts.ranks / 1e6;
  const lines = [
    `import-many  ${opts.ranks} Kineto traces of ${mb.toFixed(2)} MB (the real 2-rank DDP job replicated, bench/hta.ts), ${opts.rounds} rounds alternating, wall from spawn to exit, through the bundle`,
    `         ${machine}; Node ${process.version}; load ${fmtLoad(loadBefore)} → ${fmtLoad(loadAfter)}; commit ${git.commit}${git.changedFiles ? ` (+${git.changedFiles} tracked files changed)` : ''}; warm cache (every trace read once first)` +
      (built !== null ? `; the bundle built first (${built.toFixed(1)} s)` : '; the bundle current'),
    ...(['many', 'many-1', 'each'] as Way[]).map(
      (w) =>
        `         ${`${LABEL[w]}${w === 'many' ? ` (${Math.min(workers, opts.ranks)})` : ''}`.padEnd(34)} ${`${med(w).toFixed(2)} s`.padStart(9)}  ${(med(w) / opts.ranks).toFixed(3)} s a trace  (${runs[w].map((x) => x.toFixed(2)).join(', ')})`,
    ),
    `         one command per trace / one command with workers: ${(med('each') / med('many')).toFixed(2)} ×; / one command, --workers 0: ${(med('each') / med('many-1')).toFixed(2)} ×`,
  ];
  const result = {
    ranks: opts.ranks,
    rounds: opts.rounds,
    traceMB: mb,
    generator: 'bench/hta.ts generateHtaJob (test/fixtures/kineto/job replicated; rank, world size, process group, pid, trace_id rewritten; timestamps kept)',
    machine: { cpu, cores: os.cpus().length, availableParallelism: workers, memGiB: os.totalmem() / 2 ** 30, host: os.hostname(), node: process.version },
    loadavg: { before: loadBefore, after: loadAfter },
    commit: git.commit,
    trackedFilesChanged: git.changedFiles,
    cache: 'warm: every trace read once first; the bundle through profiler/cli/launch.cjs (STREAMSCOPE_CLI=bundle)',
    bundleBuilt: built,
    seconds: runs,
    medianSeconds: { many: med('many'), many1: med('many-1'), each: med('each') },
    workers: Math.min(workers, opts.ranks),
    ratioEachOverMany: med('each') / med('many'),
    ratioEachOverMany1: med('each') / med('many-1'),
  };
  return { result, lines };
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  const { values } = parseArgs({ options: { ranks: { type: 'string', default: '64' }, rounds: { type: 'string', default: '3' }, json: { type: 'string' } } });
  const r = benchImportMany({ ranks: Number(values.ranks), rounds: Number(values.rounds) });
  process.stdout.write(r.lines.join('\n') + '\n');
  if (values.json) fs.writeFileSync(values.json, JSON.stringify(r.result, null, 2) + '\n');
}
