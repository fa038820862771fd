// `node bench/hta.ts [--ranks 8,64] [--mb 0] [--rounds 3] [--hta PATH] [--python PY]`
// (or `npm run bench -- --only hta`): StreamScope beside Meta's
// HolisticTraceAnalysis (HTA) on the same job's Kineto traces, one run
// (issue 29).
//
// The job: test/fixtures/kineto/job, the two ranks of a DDP job traced by
// torch.profiler on an H200 (2.2 MB each), replicated to N ranks: rank r is a
// copy of real rank r mod 2 with its process group's rank and size rewritten
// (distributedInfo rank, world_size, pg_size, ranks), its process's pid (and
// the main thread's tid, which is the pid) made 528 + r, its trace_id made its
// own; timestamps and GPU (GPU 0, as in the real job: one GPU visible to each
// rank) kept, so the even ranks run exactly as real rank 0 did and the odd
// ones as rank 1, on one clock. Each file is written with its head as Kineto
// writes it and its events one a line without blanks: 1.7 MB a rank (the
// recorded 2.2 MB less Kineto's blanks). With --mb M each rank's events are repeated
// back to back in time (copy k shifted by k × the trace's span + 1 ms;
// correlation, External id, flow ids, Ev Idx and sequence numbers offset per
// copy so they stay unique) until the rank's file is about M MB.
//
// Then, each in a process of its own under /usr/bin/time (wall, peak RSS),
// the process tree's summed proportional set size (PSS) also sampled every
// 200 ms (HTA parses the ranks on a pool of forked processes, which
// /usr/bin/time's peak, the largest single process, would leave out):
//
//   HTA         bench/hta_driver.py: TraceAnalysis(trace_dir) (the load),
//               get_temporal_breakdown(), get_comm_comp_overlap(), plots off;
//   StreamScope `streamscope import` of every trace, one command per trace,
//               and, where `import` takes several traces, one `import` of
//               all of them (its worker threads); then `streamscope report
//               --whole --json` of the recordings (of the one import where
//               there is one): the job from their summaries, built for the
//               report; --whole as HTA analyses the whole trace. Every
//               command through the bundle (built first where not current,
//               and again, untimed, should a source change meanwhile).
//
// --rounds N rounds of both (3), HTA first in the even ones, StreamScope
// first in the odd; each figure the median over the rounds.
//
// The per-rank overlap of both: HTA's comp_comm_overlap_pctg / 100 (the
// share of a rank's merged NCCL kernel time during which a computation kernel ran) and
// ours (hidden / communication: communication while compute ran on the same
// GPU, over communication), and the largest difference in points.
//
// HTA is looked for in `python3` then `/usr/bin/python3` (--python PY to
// choose; --hta PATH to a checkout of HTA put first on its path); where none
// imports it the bench says how to install it and skips.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { repoRoot } from '../profiler/native/paths.ts';
import { ensureBundle } from './startup.ts';
import { gnuTime } from './gnu-time.ts';

export interface HtaOptions {
  /** Job sizes, in ranks. */
  ranks: number[];
  /** Each rank's trace grown to about this many MB (0: the real trace as it is, ~2.2 MB). */
  mb: number;
  /** A checkout of HTA to put first on Python's path. */
  hta?: string;
  /** The Python to run HTA with (default: the first of python3, /usr/bin/python3 that imports it). */
  python?: string;
  /** Rounds of both tools per job size, their order alternating; medians reported. */
  rounds: number;
}

const FIXTURES = ['slow-rank0.json', 'slow-rank1.json'].map((f) => path.join(repoRoot, 'test/fixtures/kineto/job', f)) as [string, string];
const DRIVER = path.join(repoRoot, 'bench/hta_driver.py');
const FIRST_PID = 528;

type Json = Record<string, unknown>;
interface Trace extends Json {
  traceEvents: Json[];
  distributedInfo: Json & { pg_config?: Json[] };
  trace_id?: string;
}

/** Events repeated `copies` times back to back, ids offset per copy (see the header). */
function repeated(events: Json[], copies: number): Json[] {
  if (copies <= 1) return events;
  const once = events.filter((e) => e.ph !== 'M' && e.cat !== 'Trace' && typeof e.pid === 'number' && typeof e.ts === 'number');
  let first = Infinity;
  let last = -Infinity;
  const max = { correlation: 0, 'External id': 0, 'Ev Idx': 0, 'Sequence number': 0, flow: 0 };
  for (const e of once) {
    const ts = e.ts as number;
    first = Math.min(first, ts);
    last = Math.max(last, ts + (typeof e.dur === 'number' ? e.dur : 0));
    if (typeof e.id === 'number') max.flow = Math.max(max.flow, e.id);
    const args = e.args as Json | undefined;
    if (args)
      for (const k of ['correlation', 'External id', 'Ev Idx', 'Sequence number'] as const)
        if (typeof args[k] === 'number') max[k] = Math.max(max[k], args[k] as number);
  }
  const period = last - first + 1000; // µs: the span and 1 ms
  const out = [...events];
  for (let k = 1; k < copies; k++) {
    for (const e of once) {
      const c: Json = { ...e, ts: (e.ts as number) + k * period };
      if (typeof e.id === 'number') c.id = e.id + k * (max.flow + 1);
      const args = e.args as Json | undefined;
      if (args) {
        const a: Json = { ...args };
        for (const key of ['correlation', 'External id', 'Ev Idx', 'Sequence number'] as const) {
          if (typeof a[key] === 'number' && (a[key] as number) >= 0) a[key] = (a[key] as number) + k * (max[key] + 1);
        }
        c.args = a;
      }
      out.push(c);
    }
  }
  return out;
}

/** Writes the N-rank job into `dir` (rank0.json …), each rank's trace about `mb` MB (0: as recorded). */
export function generateHtaJob(dir: string, ranks: number, mb: number): { bytes: number; copies: number } {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const sources = FIXTURES.map((f) => JSON.parse(fs.readFileSync(f, 'utf8')) as Trace) as [Trace, Trace];
  // Copies of rank 0's events, as written (compact), that make about `mb` MB.
  const copies = mb > 0 ? Math.max(1, Math.round((mb * 1e6) / Buffer.byteLength(JSON.stringify(sources[0].traceEvents)))) : 1;
  const events = sources.map((s) => repeated(s.traceEvents, copies)) as [Json[], Json[]];
  let bytes = 0;
  for (let r = 0; r < ranks; r++) {
    const src = r % 2 === 0 ? sources[0] : sources[1];
    const srcPid = src.distributedInfo.rank === 0 ? FIRST_PID : FIRST_PID + 1;
    const pid = FIRST_PID + r;
    const { traceEvents: _, ...head } = src;
    const info: Json = { ...src.distributedInfo, rank: r, world_size: ranks };
    if (Array.isArray(src.distributedInfo.pg_config)) {
      info.pg_config = src.distributedInfo.pg_config.map((pg) => ({
        ...pg,
        pg_size: ranks,
        ranks: `[${Array.from({ length: ranks }, (_v, i) => i).join(', ')}]`,
      }));
    }
    const top: Json = {
      ...head,
      distributedInfo: info,
      trace_id: `${String(src.trace_id ?? '').slice(0, 24)}${r.toString(16).toUpperCase().padStart(8, '0')}`,
      traceName: `rank${r}.json`,
    };
    const file = path.join(dir, `rank${r}.json`);
    const fd = fs.openSync(file, 'w');
    try {
      // The head as Kineto writes it, '"rank": 3' with its blank (HTA finds a
      // file's rank by that pattern); the events one a line without blanks.
      const headJson = JSON.stringify(top, null, 2);
      fs.writeSync(fd, `${headJson.slice(0, -2)},\n  "traceEvents": [\n`);
      const ev = r % 2 === 0 ? events[0] : events[1];
      const chunk: string[] = [];
      for (let i = 0; i < ev.length; i++) {
        const e = ev[i]!;
        const c = e.pid === srcPid || e.tid === srcPid ? { ...e, pid: e.pid === srcPid ? pid : e.pid, tid: e.tid === srcPid ? pid : e.tid } : e;
        chunk.push(JSON.stringify(c));
        if (chunk.length === 10000 || i === ev.length - 1) {
          fs.writeSync(fd, chunk.join(',\n') + (i === ev.length - 1 ? '\n' : ',\n'));
          chunk.length = 0;
        }
      }
      fs.writeSync(fd, ']}\n');
    } finally {
      fs.closeSync(fd);
    }
    bytes += fs.statSync(file).size;
  }
  return { bytes, copies };
}

/** The pids of `root` and every process below it (/proc/PID/task/TID/children). */
function tree(root: number): number[] {
  const out: number[] = [];
  const todo = [root];
  while (todo.length > 0) {
    const pid = todo.pop()!;
    out.push(pid);
    let tasks: string[];
    try {
      tasks = fs.readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const t of tasks) {
      try {
        for (const c of fs.readFileSync(`/proc/${pid}/task/${t}/children`, 'utf8').split(' ')) if (c.trim()) todo.push(Number(c));
      } catch {
        // gone meanwhile
      }
    }
  }
  return out;
}

/** The summed PSS of `pids`, KiB (a process gone meanwhile counts 0). */
function pssKiB(pids: number[]): number {
  let kib = 0;
  for (const pid of pids) {
    try {
      const m = /^Pss:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
      if (m) kib += Number(m[1]);
    } catch {
      // gone meanwhile
    }
  }
  return kib;
}

export interface Timed {
  seconds: number;
  /** /usr/bin/time's peak RSS: the largest single process of the command. */
  maxRssMiB: number;
  /** The command's process tree, summed PSS, sampled every 200 ms (0 when it ended before the first sample). */
  treePssMiB: number;
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A command in a process of its own under /usr/bin/time: wall, peak RSS, and its process tree's summed PSS sampled. */
export function timed(args: string[], env?: NodeJS.ProcessEnv): Promise<Timed> {
  return new Promise((resolve, reject) => {
    const t = performance.now();
    const child = spawn(gnuTime(), ['-f', '%M', ...args], { env: env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    let peakKiB = 0;
    const sample = setInterval(() => {
      if (child.pid !== undefined) peakKiB = Math.max(peakKiB, pssKiB(tree(child.pid)));
    }, 200);
    child.on('error', (e) => {
      clearInterval(sample);
      reject(e);
    });
    child.on('close', (code) => {
      clearInterval(sample);
      const seconds = (performance.now() - t) / 1000;
      const lines = Buffer.concat(err).toString('utf8').trimEnd().split('\n');
      resolve({
        seconds,
        maxRssMiB: Number(lines.at(-1)) / 1024,
        treePssMiB: peakKiB / 1024,
        code,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: lines.slice(0, -1).join('\n'),
      });
    });
  });
}

/** The Python that imports HTA, and the versions it reports; null when none does. */
export function findHta(opts: Pick<HtaOptions, 'hta' | 'python'>): { python: string; versions: Record<string, string> } | null {
  for (const python of opts.python ? [opts.python] : ['python3', '/usr/bin/python3']) {
    const r = spawnSync(python, [DRIVER, '--check', ...(opts.hta ? ['--hta', opts.hta] : [])], { encoding: 'utf8' });
    if (r.status === 0) return { python, versions: JSON.parse(r.stdout) as Record<string, string> };
  }
  return null;
}

/** The skip line where HTA is not importable: how to install it. */
export function htaMissing(opts: Pick<HtaOptions, 'hta' | 'python'>): string {
  return (
    `hta  skipped: HTA (HolisticTraceAnalysis) does not import in ${opts.python ?? 'python3 or /usr/bin/python3'}${opts.hta ? ` with ${opts.hta} on its path` : ''}. ` +
    'Install it: pip install HolisticTraceAnalysis==0.5.0; or give a checkout: --hta PATH (git clone https://github.com/facebookresearch/HolisticTraceAnalysis; git checkout v0.5.0) ' +
    'with its dependencies installed (Debian: apt-get install python3-pandas python3-numpy python3-psutil python3-plotly python3-pydot python3-networkx), and --hta-python PY (node bench/hta.ts: --python) to pick the interpreter'
  );
}

interface Side {
  seconds: number;
  peakMiB: number;
}

interface HtaRun {
  versions: Record<string, string>;
  seconds: { load: number; temporalBreakdown: number; commCompOverlap: number };
  ranks: { rank: number; overlap: number }[];
}
interface JobReport {
  job: { ranks: number };
  communication: { ranks: { rank: number | null; total: { overlap: number | null } }[] };
}
interface Round {
  hta: Timed;
  htaRun: HtaRun;
  each: Timed[];
  all: Timed | null;
  report: Timed;
  job: JobReport;
}

/** HTA on the traces, in a process of its own. */
async function runHta(dir: string, traces: string, opts: HtaOptions, python: string): Promise<{ hta: Timed; htaRun: HtaRun }> {
  const htaOut = path.join(dir, 'hta.json');
  fs.rmSync(htaOut, { force: true });
  const hta = await timed([python, DRIVER, traces, '--out', htaOut, ...(opts.hta ? ['--hta', opts.hta] : [])]);
  if (hta.code !== 0) throw new Error(`HTA failed (${hta.code}): ${hta.stderr.slice(-3000)}`);
  return { hta, htaRun: JSON.parse(fs.readFileSync(htaOut, 'utf8')) as HtaRun };
}

/** Bundles built during the run (another engineer's edit made the one in use stale), and the seconds they took, untimed. */
const rebuilds: number[] = [];

/**
 * A `streamscope` command through the bundle (STREAMSCOPE_CLI=bundle: what
 * the command runs where it is current, and never the sources silently).
 * Where a source changed meanwhile (a shared tree), the launcher refuses
 * with exit 2 before doing anything: the bundle is built again, untimed,
 * and the command run again.
 */
async function ourCli(args: string[]): Promise<Timed> {
  const launcher = path.join(repoRoot, 'profiler/cli/launch.cjs');
  const env = { ...process.env, STREAMSCOPE_CLI: 'bundle' };
  for (let attempt = 0; ; attempt++) {
    const r = await timed([process.execPath, launcher, ...args], env);
    if (!(r.code === 2 && /bundled CLI is not current/.test(r.stderr)) || attempt === 3) return r;
    const built = ensureBundle();
    if (built !== null) rebuilds.push(built);
  }
}

/** StreamScope on the traces: one import per trace, one import of all (where import takes several), the job's report. */
async function runOurs(recs: string, files: string[], several: boolean): Promise<Pick<Round, 'each' | 'all' | 'report' | 'job'>> {
  fs.rmSync(recs, { recursive: true, force: true });
  const recsEach = path.join(recs, 'each');
  const recsAll = path.join(recs, 'all');
  fs.mkdirSync(recsEach, { recursive: true });
  const each: Timed[] = [];
  for (const [r, f] of files.entries()) {
    const i = await ourCli(['import', f, '-o', path.join(recsEach, `rank${r}.sqlite`), '--force']);
    if (i.code !== 0) throw new Error(`import of ${f} failed (${i.code}): ${i.stderr.slice(-2000)}`);
    each.push(i);
  }
  let all: Timed | null = null;
  if (several) {
    fs.mkdirSync(recsAll);
    all = await ourCli(['import', '--force', '-o', recsAll, ...files]);
    if (all.code !== 0) throw new Error(`import of the ${files.length} traces failed (${all.code}): ${all.stderr.slice(-2000)}`);
  }
  const sqlite = files.map((_f, r) => path.join(all ? recsAll : recsEach, `rank${r}.sqlite`));
  const report = await ourCli(['report', '--whole', '--json', ...sqlite]);
  if (report.code !== 0) throw new Error(`report failed (${report.code}): ${report.stderr.slice(-2000)}`);
  return { each, all, report, job: JSON.parse(report.stdout) as JobReport };
}

const peak = (t: Timed): number => Math.max(t.maxRssMiB, t.treePssMiB);
const med = (xs: number[]): number => {
  const s = [...xs].sort((x, y) => x - y);
  return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** One job size: generated, then `rounds` rounds of HTA and StreamScope on it, their order alternating. */
async function runJob(ranks: number, opts: HtaOptions, python: string): Promise<Record<string, unknown>> {
  const dir = path.join(os.tmpdir(), `streamscope-bench-hta-${ranks}x${opts.mb || 'real'}`);
  const traces = path.join(dir, 'traces');
  const recs = path.join(dir, 'recordings');
  const t = performance.now();
  const gen = generateHtaJob(traces, ranks, opts.mb);
  const generatedSeconds = (performance.now() - t) / 1000;
  const files = Array.from({ length: ranks }, (_v, r) => path.join(traces, `rank${r}.json`));
  for (const f of files) fs.readFileSync(f); // warm: every trace read once before either tool
  const several = importTakesSeveral();
  const built = ensureBundle();
  if (built !== null) rebuilds.push(built);

  const rounds: (Round & { loadavg: number[] })[] = [];
  for (let k = 0; k < opts.rounds; k++) {
    const loadavg = os.loadavg();
    if (k % 2 === 0) {
      const h = await runHta(dir, traces, opts, python);
      rounds.push({ ...h, ...(await runOurs(recs, files, several)), loadavg });
    } else {
      const o = await runOurs(recs, files, several);
      rounds.push({ ...(await runHta(dir, traces, opts, python)), ...o, loadavg });
    }
  }
  const last = rounds.at(-1)!;
  const htaResult = last.htaRun;
  const job = last.job;
  if (htaResult.ranks.length !== ranks) throw new Error(`HTA found ${htaResult.ranks.length} ranks of ${ranks} in ${traces}`);
  if (job.job.ranks !== ranks) throw new Error(`the report found ${job.job.ranks} ranks of ${ranks}`);
  const ours = new Map(job.communication.ranks.map((x) => [x.rank, x.total.overlap]));
  const perRank = htaResult.ranks.map((h) => {
    const o = ours.get(h.rank) ?? null;
    return { rank: h.rank, hta: h.overlap, streamscope: o, differencePoints: o === null ? null : 100 * (o - h.overlap) };
  });
  const diffs = perRank.map((p) => (p.differencePoints === null ? Infinity : Math.abs(p.differencePoints)));

  // Per round, then the median over the rounds of each figure.
  const perRound = rounds.map((r) => {
    const eachSeconds = r.each.reduce((s, i) => s + i.seconds, 0);
    const eachPeak = Math.max(...r.each.map(peak));
    return {
      loadavg: r.loadavg,
      order: rounds.indexOf(r) % 2 === 0 ? 'HTA first' : 'StreamScope first',
      hta: { seconds: r.hta.seconds, phases: r.htaRun.seconds, maxRssMiB: r.hta.maxRssMiB, treePssMiB: r.hta.treePssMiB, peakMiB: peak(r.hta) },
      importEach: { seconds: eachSeconds, secondsPerTraceMedian: med(r.each.map((i) => i.seconds)), peakMiB: eachPeak },
      importAll: r.all ? { seconds: r.all.seconds, maxRssMiB: r.all.maxRssMiB, treePssMiB: r.all.treePssMiB, peakMiB: peak(r.all) } : null,
      report: { seconds: r.report.seconds, maxRssMiB: r.report.maxRssMiB, treePssMiB: r.report.treePssMiB, peakMiB: peak(r.report) },
      endToEnd: {
        importEach: { seconds: eachSeconds + r.report.seconds, peakMiB: Math.max(eachPeak, peak(r.report)) },
        importAll: r.all ? { seconds: r.all.seconds + r.report.seconds, peakMiB: Math.max(peak(r.all), peak(r.report)) } : null,
      },
    };
  });
  const m = (f: (r: (typeof perRound)[number]) => number): number => med(perRound.map(f));
  const htaSide: Side = { seconds: m((r) => r.hta.seconds), peakMiB: m((r) => r.hta.peakMiB) };
  const viaEach: Side = { seconds: m((r) => r.endToEnd.importEach.seconds), peakMiB: m((r) => r.endToEnd.importEach.peakMiB) };
  const viaAll: Side | null = several ? { seconds: m((r) => r.endToEnd.importAll!.seconds), peakMiB: m((r) => r.endToEnd.importAll!.peakMiB) } : null;
  const ratio = (x: Side): { wall: number; memory: number } => ({ wall: htaSide.seconds / x.seconds, memory: htaSide.peakMiB / x.peakMiB });
  return {
    ranks,
    mbPerRank: gen.bytes / ranks / 1e6,
    copiesPerRank: gen.copies,
    traceBytes: gen.bytes,
    generatedSeconds,
    rounds: opts.rounds,
    hta: {
      seconds: htaSide.seconds,
      phases: {
        load: m((r) => r.hta.phases.load),
        temporalBreakdown: m((r) => r.hta.phases.temporalBreakdown),
        commCompOverlap: m((r) => r.hta.phases.commCompOverlap),
      },
      peakMiB: htaSide.peakMiB,
    },
    streamscope: {
      importEach: {
        seconds: m((r) => r.importEach.seconds),
        secondsPerTraceMedian: m((r) => r.importEach.secondsPerTraceMedian),
        peakMiB: m((r) => r.importEach.peakMiB),
      },
      importAll: several ? { seconds: m((r) => r.importAll!.seconds), peakMiB: m((r) => r.importAll!.peakMiB), workers: 'default (one per core)' } : null,
      report: {
        seconds: m((r) => r.report.seconds),
        peakMiB: m((r) => r.report.peakMiB),
        ranks: job.job.ranks,
        of: several ? 'the recordings of the one import' : 'the recordings of the imports per trace',
      },
      endToEnd: { importEach: viaEach, importAll: viaAll },
    },
    ratio: { importEach: ratio(viaEach), importAll: viaAll ? ratio(viaAll) : null },
    overlap: { maxDifferencePoints: Math.max(...diffs), perRank },
    versions: htaResult.versions,
    perRound,
  };
}

/** Whether `streamscope import` takes several traces (`import TRACE...`). */
function importTakesSeveral(): boolean {
  const r = spawnSync(process.execPath, [path.join(repoRoot, 'profiler/cli/launch.cjs'), 'import', '--help'], { encoding: 'utf8' });
  return /TRACE\.\.\./.test(r.stdout + r.stderr);
}

/** What ran StreamScope's commands: the bundle, and how often it was built again during the run. */
function cliRuns(): string {
  const r = spawnSync(process.execPath, [path.join(repoRoot, 'profiler/cli/launch.cjs'), '--help'], {
    env: { ...process.env, STREAMSCOPE_CLI: 'bundle' },
    encoding: 'utf8',
  });
  return r.status === 0 ? 'bundle' : 'sources (the bundle is not current)';
}

export async function benchHta(opts: HtaOptions): Promise<{ result: Record<string, unknown>; lines: string[] }> {
  const found = findHta(opts);
  if (!found) return { result: { skipped: 'HTA not importable' }, lines: [htaMissing(opts)] };
  const commit = spawnSync('git', ['-C', repoRoot, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).stdout.trim();
  const jobs: Record<string, unknown>[] = [];
  // Other work in the tree shows: the profiler's files changed from the commit.
  const dirty = spawnSync('git', ['-C', repoRoot, 'status', '--porcelain', '--', 'profiler', 'native'], { encoding: 'utf8' })
    .stdout.split('\n')
    .filter(Boolean).length;
  for (const n of opts.ranks) jobs.push(await runJob(n, opts, found.python));
  const cli = cliRuns();
  const v = found.versions;
  const mib = (x: number): string => (x >= 1024 ? `${(x / 1024).toFixed(2)} GiB` : `${x.toFixed(0)} MiB`);
  const lines = [
    '',
    `HTA beside StreamScope on the same Kineto traces (issue 29): HTA ${v.hta} (${found.python}, Python ${v.python}, pandas ${v.pandas}, numpy ${v.numpy}; from ${v.htaFrom}), StreamScope ${commit}${dirty ? ` with ${dirty} files of profiler/ and native/ changed in the tree` : ''} through the ${cli}, ${os.cpus().length} cores, load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(
        ' ',
      )}, warm cache (every trace read once first), ${opts.rounds === 1 ? 'one round' : `the median of ${opts.rounds} rounds, the tools' order alternating`}`,
    '| job | what | wall | of which | peak memory | HTA ÷ this: wall | memory |',
    '| --- | --- | --- | --- | --- | --- | --- |',
  ];
  const overlapLines: string[] = [];
  for (const j of jobs as {
    ranks: number;
    mbPerRank: number;
    hta: { seconds: number; phases: { load: number; temporalBreakdown: number; commCompOverlap: number }; peakMiB: number };
    streamscope: {
      importEach: { seconds: number };
      importAll: { seconds: number } | null;
      report: { seconds: number };
      endToEnd: { importEach: Side; importAll: Side | null };
    };
    ratio: { importEach: { wall: number; memory: number }; importAll: { wall: number; memory: number } | null };
    overlap: { maxDifferencePoints: number; perRank: { rank: number; hta: number; streamscope: number | null }[] };
  }[]) {
    const p = j.hta.phases;
    const job = `${j.ranks} ranks × ${j.mbPerRank.toFixed(1)} MB`;
    const s = j.streamscope;
    lines.push(
      `| ${job} | HTA: TraceAnalysis + temporal breakdown + comm/comp overlap (one process) | ${j.hta.seconds.toFixed(1)} s | load ${p.load.toFixed(1)} + ${p.temporalBreakdown.toFixed(1)} + ${p.commCompOverlap.toFixed(1)} s | ${mib(j.hta.peakMiB)} | | |`,
    );
    if (s.importAll && s.endToEnd.importAll && j.ratio.importAll) {
      lines.push(
        `| ${job} | StreamScope: one \`import\` of all traces + \`report\` | ${s.endToEnd.importAll.seconds.toFixed(1)} s | import ${s.importAll.seconds.toFixed(1)} + report ${s.report.seconds.toFixed(1)} s | ${mib(s.endToEnd.importAll.peakMiB)} | ${j.ratio.importAll.wall.toFixed(2)} × | ${j.ratio.importAll.memory.toFixed(2)} × |`,
      );
    }
    lines.push(
      `| ${job} | StreamScope: one \`import\` per trace + \`report\` | ${s.endToEnd.importEach.seconds.toFixed(1)} s | imports ${s.importEach.seconds.toFixed(1)} + report ${s.report.seconds.toFixed(1)} s | ${mib(s.endToEnd.importEach.peakMiB)} | ${j.ratio.importEach.wall.toFixed(2)} × | ${j.ratio.importEach.memory.toFixed(2)} × |`,
    );
    const worst = j.overlap.perRank.reduce((w, x) => (Math.abs((x.streamscope ?? Infinity) - x.hta) > Math.abs((w.streamscope ?? Infinity) - w.hta) ? x : w));
    overlapLines.push(
      `${job}: per-rank communication overlap, HTA against StreamScope: max |difference| ${j.overlap.maxDifferencePoints.toFixed(3)} points (rank ${worst.rank}: HTA ${(100 * worst.hta).toFixed(2)}%, StreamScope ${worst.streamscope === null ? '—' : (100 * worst.streamscope).toFixed(3) + '%'})`,
    );
  }
  lines.push(...overlapLines);
  lines.push(
    "(HTA's phases are timed inside its process; the rest of its wall is Python starting and importing pandas. The report is of the recordings the one import wrote, --whole as HTA's analyses are. Peak: the largest of /usr/bin/time's peak RSS and the process tree's summed PSS sampled every 200 ms; of the imports per trace, the largest one's.)",
  );
  return {
    result: {
      python: found.python,
      versions: v,
      cli,
      rebuildSeconds: rebuilds,
      commit,
      treeChangedFiles: dirty,
      cores: os.cpus().length,
      loadavgAfter: os.loadavg(),
      jobs,
    },
    lines,
  };
}

if (process.argv[1] && path.resolve(process.argv[1]) === import.meta.filename) {
  const { values } = parseArgs({
    options: {
      ranks: { type: 'string', default: '8,64' },
      mb: { type: 'string', default: '0' },
      hta: { type: 'string' },
      python: { type: 'string' },
      rounds: { type: 'string', default: '3' },
      json: { type: 'string' },
    },
  });
  const { result, lines } = await benchHta({
    ranks: values.ranks.split(',').map(Number),
    mb: Number(values.mb),
    hta: values.hta,
    python: values.python,
    rounds: Number(values.rounds),
  });
  console.log(lines.join('\n'));
  if (values.json) fs.writeFileSync(values.json, JSON.stringify(result, null, 2) + '\n');
}
