// `node bench/job-summaries.ts [--ranks 1024] [--ops 100000] [--workers 2] [--rounds N]`
// (or `npm run bench -- --only job-summaries`): a job of many ranks
// reported from its ranks' summaries (issue 29; profiler/job/). Generated
// ranks (bench/generate-ranks.ts: one host and GPU each, clocks off by up
// to ± 5 ms, one NCCL all-reduce per 100 operations), then, each in a
// process of its own under /usr/bin/time (wall, peak resident memory):
//
//   read once   every byte of every file read (8 MiB reads): the floor any
//               reader of the files pays, with the cache as it is;
//   summarize   `streamscope summarize --force --workers N` of every file:
//               each read once and analysed, its summary stored;
//   report      `streamscope report FILE…` of the job from the summaries:
//               clocks aligned, the answers across ranks.
//
// The files are kept in the OS temp folder between runs (generating 1,024
// ranks takes minutes). The cache is warm (every file read once before the
// timed read), or with --cold (as root) dropped before reading once and before
// summarizing, so that both read from the disk. --rounds N repeats the pair and
// prints each round's ratio and their median.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { repoRoot } from '../profiler/native/paths.ts';
import { generateRanks } from './generate-ranks.ts';
import { dropCaches } from './page-cache.ts';
import { gnuTime } from './gnu-time.ts';

export interface JobSummariesOptions {
  ranks: number;
  ops: number;
  workers: number;
  /** Drop the page cache before reading the files once and before summarizing (root only: /proc/sys/vm/drop_caches). */
  cold: boolean;
  /**
   * Rounds of (read once, summarize), each pair side by side: the ratio is each round's, and the median of them printed
   * (default 1). Cold, the disk of the development VM read these files at 1.1 – 2.2 GiB/s from one hour to the next.
   */
  rounds?: number;
}

interface Timed {
  seconds: number;
  maxRssMiB: number;
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A command in a process of its own under /usr/bin/time: its wall time and peak resident memory. */
function timed(args: string[]): Timed {
  const t = performance.now();
  const r = spawnSync(gnuTime(), ['-f', '%M', ...args], { encoding: 'utf8', maxBuffer: 1 << 30 });
  const seconds = (performance.now() - t) / 1000;
  const lines = r.stderr.trimEnd().split('\n');
  return { seconds, maxRssMiB: Number(lines.at(-1)) / 1024, code: r.status, stdout: r.stdout, stderr: lines.slice(0, -1).join('\n') };
}

/** Reads every byte of `files` once, in 8 MiB reads: seconds and bytes. */
function readOnce(files: string[]): { seconds: number; bytes: number } {
  const buf = Buffer.allocUnsafe(8 << 20);
  let bytes = 0;
  const t = performance.now();
  for (const f of files) {
    const fd = fs.openSync(f, 'r');
    try {
      for (let n; (n = fs.readSync(fd, buf, 0, buf.length, null)) > 0;) bytes += n;
    } finally {
      fs.closeSync(fd);
    }
  }
  return { seconds: (performance.now() - t) / 1000, bytes };
}

export function benchJobSummaries(opts: JobSummariesOptions): { result: Record<string, unknown>; lines: string[] } {
  const dir = path.join(os.tmpdir(), `streamscope-bench-job-${opts.ranks}x${opts.ops}`);
  let generatedSeconds: number | null = null;
  if (!fs.existsSync(path.join(dir, 'done'))) {
    fs.rmSync(dir, { recursive: true, force: true });
    const t = performance.now();
    generateRanks(dir, opts.ranks, opts.ops, 8);
    generatedSeconds = (performance.now() - t) / 1000;
    fs.writeFileSync(path.join(dir, 'done'), '');
  }
  const files = fs
    .readdirSync(dir)
    .filter((f) => /^rank\d+\.sqlite$/.test(f))
    .sort()
    .map((f) => path.join(dir, f));
  const cli = path.join(repoRoot, 'profiler/cli/streamscope.ts');
  // Warm means warm: a read before the timed one, since whatever ran since
  // the files were written (another job of ranks) may have evicted them.
  const rounds: { read: { seconds: number; bytes: number }; summarize: Timed; ratio: number }[] = [];
  for (let r = 0; r < (opts.rounds ?? 1); r++) {
    if (opts.cold) dropCaches();
    else readOnce(files);
    const read = readOnce(files);
    if (opts.cold) dropCaches();
    const summarize = timed([process.execPath, cli, 'summarize', '--force', '--workers', String(opts.workers), '--json', ...files]);
    if (summarize.code !== 0) throw new Error(`summarize failed (${summarize.code}): ${summarize.stderr.slice(-2000)}`);
    rounds.push({ read, summarize, ratio: read.seconds / summarize.seconds });
  }
  // The round of the median ratio is the one shown (its read and its summarize side by side).
  const byRatio = [...rounds].sort((a, b) => a.ratio - b.ratio);
  const { read, summarize } = byRatio[Math.floor((byRatio.length - 1) / 2)]!;
  const summaryBytes = summarize.stdout.split('\n').filter(Boolean).length;
  const report = timed([process.execPath, cli, 'report', '--json', ...files]);
  if (report.code !== 0) throw new Error(`report failed (${report.code}): ${report.stderr.slice(-2000)}`);
  const job = JSON.parse(report.stdout) as { job: { ranks: number }; stragglers: { instances: number }; findings: unknown[] };
  const gib = read.bytes / 2 ** 30;
  const result = {
    ranks: opts.ranks,
    opsPerRank: opts.ops,
    workers: opts.workers,
    cache: opts.cold ? 'cold' : 'warm',
    cores: os.cpus().length,
    loadavg: os.loadavg(),
    generatedSeconds,
    files: { count: files.length, gib },
    readOnce: { seconds: read.seconds, gibPerSecond: gib / read.seconds },
    summarize: { seconds: summarize.seconds, maxRssMiB: summarize.maxRssMiB, recordings: summaryBytes, gibPerSecond: gib / summarize.seconds },
    rounds: rounds.map((r) => ({ readOnceSeconds: r.read.seconds, summarizeSeconds: r.summarize.seconds, ratio: r.ratio })),
    report: { seconds: report.seconds, maxRssMiB: report.maxRssMiB, ranks: job.job.ranks, instances: job.stragglers.instances, findings: job.findings.length },
  };
  const lines = [
    '',
    `A job from its ranks' summaries: ${opts.ranks.toLocaleString('en-US')} generated ranks × ${opts.ops.toLocaleString('en-US')} GPU operations (${gib.toFixed(1)} GiB), ${os.cpus().length} cores, load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}, ${opts.cold ? 'cold cache (dropped before reading once and before summarizing; the report reads the summaries warm)' : 'warm cache'}`,
    '| step | wall | peak RSS | | target |',
    '| --- | --- | --- | --- | --- |',
    `| read every file once | ${read.seconds.toFixed(1)} s | — | ${(gib / read.seconds).toFixed(2)} GiB/s | — |`,
    `| summarize (${opts.workers} workers) | ${summarize.seconds.toFixed(1)} s | ${summarize.maxRssMiB.toFixed(0)} MiB | ${(read.seconds / summarize.seconds).toFixed(2)} × the speed of reading once${rounds.length > 1 ? ` (the median of ${rounds.length} rounds: ${rounds.map((r) => `${r.read.seconds.toFixed(1)} / ${r.summarize.seconds.toFixed(1)} s = ${r.ratio.toFixed(2)}`).join(', ')})` : ''} | ≥ 0.5 × |`,
    `| report from the summaries | ${report.seconds.toFixed(1)} s | ${report.maxRssMiB.toFixed(0)} MiB | ${job.job.ranks} ranks, ${job.stragglers.instances} collective instances matched | ≤ 10 s, ≤ 2 GiB |`,
  ];
  return { result, lines };
}

if (process.argv[1] && path.resolve(process.argv[1]) === import.meta.filename) {
  const { values } = parseArgs({
    options: {
      ranks: { type: 'string', default: '1024' },
      ops: { type: 'string', default: '100000' },
      workers: { type: 'string', default: '2' },
      cold: { type: 'boolean', default: false },
      rounds: { type: 'string', default: '1' },
      json: { type: 'string' },
    },
  });
  const { result, lines } = benchJobSummaries({
    ranks: Number(values.ranks),
    ops: Number(values.ops),
    workers: Number(values.workers),
    cold: values.cold,
    rounds: Number(values.rounds),
  });
  console.log(lines.join('\n'));
  if (values.json) fs.writeFileSync(values.json, JSON.stringify(result, null, 2) + '\n');
}
