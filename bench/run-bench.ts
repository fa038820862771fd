// `npm run bench`: StreamScope's speed targets, measured side by side in
// one run, with the ratios printed last.
//
//  ingest    record stream → SQLite through the native ingest, on a synthetic
//            launch-bound stream (the C++ encoder's --bench-launches mode),
//            alternated with its ceiling: the same rows stored by SQLite
//            alone, through the ingest's statements, pragmas and
//            transactions (native/addon/src/insert_ceiling.h).
//            Target: ≥ 1.5 M records/s on the 2-core development machine,
//            ≥ 0.8 × the ceiling (issue 16).
//  overhead  (GPU only) per-launch cost of a launch-bound loop of tiny kernels
//            over 4 streams: no tracing / CUPTI alone with records discarded
//            (the floor: identical CUPTI setup, buffers thrown away) /
//            StreamScope / torch.profiler on an equivalent PyTorch loop.
//            Target: StreamScope's added time per launch ≤ 1.1 × the floor's.
//  record-wall (GPU only) what `streamscope record` adds to the wall time of a
//            short runner job and a Numba script, against the CUPTI floor on
//            the same program, and where it goes (bench/record-wall.ts).
//            Target: ≤ 1.1 × the floor's added time.
//
//  startup   each command's own start (issue 30): `node -e 0`, `streamscope
//            --help` and `streamscope report --json` of a small fixture,
//            through the bundle and through the TypeScript sources,
//            --startup-rounds rounds alternating (bench/startup.ts). Target:
//            ≤ 0.1 s above bare Node, through the bundle.
//
//  analysis  the diagnosis of a 10-million-operation recording. Target: < 5 s;
//            issue 16's goal on the 2-core machine: ≤ 4 s; issue 30's: ≤ 4 s
//            cold (the file's pages evicted, the process's first analysis),
//            ≤ 2 s warm (--analysis-rounds 3), each analysis a process of its
//            own (bench/analysis-run.ts). The first analysis (no column cache
//            entry yet: profiler/analysis/load/column-cache.ts) is timed
//            first, then cold with the entry it wrote, then warm, each beside
//            the same without the cache. Beside it, the native load alone
//            through SQLite and through the file's pages.
//  import    a 1 GB Chrome trace imported as a stream: time and peak memory,
//            cold (its pages evicted; issue 30: ≤ 6 s on the 2-core VM), then warm.
//  renderer  10 M operations over 64 streams in Chromium: open, frame times, memory.
//  selection the findings of a range selected on the timeline (a window scope),
//            recomputed on a 1 M-operation recording: over HTTP, and in the page
//            from releasing the mouse on the ruler; beside the whole-recording
//            analysis. Target: < 300 ms.
//  merge     `streamscope merge` of a generated 64-rank job (8 streams, 1 M
//            operations per rank, each with its launch call), on two threads
//            and on one, beside the floors measured in the same run: SQLite
//            copying the same rows into one file (ATTACH, INSERT … SELECT,
//            nothing rewritten), SQLite's transfer copy of the merged rows,
//            the merged file's bytes copied. Target (issue 13): < 30 s on the
//            2-core development machine. Then the job's cross-rank analysis
//            (what `streamscope report` runs): opening it, a sample of ranks
//            merged and reported, one rank alone, the whole job on request.
//            Target (issue 13): < 10 s.
//  job       the cross-rank analysis of a merged job read rank by rank, as
//            `streamscope report` runs it on more than 8 ranks
//            (profiler/analysis/diagnosis/job.ts): --job FILE (a merged job, e.g. the
//            merge benchmark's), --job-rounds runs on two worker threads and
//            on one thread, each in a process of its own, the file read
//            through first; beside the whole analyze() of the same file with
//            --merge-analysis whole. The merge benchmark measures it too, on
//            the job it merged. Target (issue 13): < 10 s.
//  job-summaries  a job of --summary-ranks (1,024) generated ranks of
//            --summary-ops (100,000) operations reported from its ranks'
//            summaries (bench/job-summaries.ts, issue 29): every file read
//            once, `summarize` on 2 workers, `report` of the job, each with
//            its wall time and peak memory. Targets: the report ≤ 10 s and
//            ≤ 2 GiB; summarize ≥ 0.5 × the speed of reading the files once.
//  job-view  the same generated ranks opened in the timeline from their
//            summaries, not merged (bench/job-open.ts, issue 29): serve's
//            start to the first frame with data in Chromium, serve's peak
//            memory, one rank unfolded. Targets: ≤ 10 s and ≤ 2 GiB; the
//            rank's detail ≤ 2 s. Run job-summaries first (it makes them).
//  page      what a user sees in the page at 10 M operations (bench/page-findings.ts,
//            issue 30), in Chromium against serve, a fresh server each run:
//            first frame; the first findings listed (the rules' own, while the
//            what-ifs replay) and the answer; wheel zooms' data while the
//            analysis runs; the Stats tab at the first frame and after the
//            findings. Targets: findings ≤ 5 s after the first frame, zoom
//            p95 ≤ 0.3 s, Stats ≤ 3 s. --page-launches N, --page-runs N.
//  live      the live timeline following a 10-minute run of 1 M GPU operations a
//            minute, replayed 4× faster (bench/live-view.ts). Target: main-thread
//            work per frame p95 ≤ 16 ms, memory bounded.
//  serve-load `streamscope serve` on a 10 M-operation recording under 200
//            concurrent clients sending the page's window, search and findings
//            requests for 60 s, then clients that abandon their requests
//            (bench/serve-load.ts). Target: no error, memory bounded; p99 reported.
//  hta       Meta's HolisticTraceAnalysis beside StreamScope on the same job's
//            Kineto traces (bench/hta.ts, issue 29): the real 2-rank DDP
//            trace (test/fixtures/kineto/job) replicated to --hta-ranks
//            (8,64) ranks, --hta-mb M per rank (0: as recorded); HTA's load +
//            temporal breakdown + comm/comp overlap (bench/hta_driver.py)
//            against `streamscope import` of all the traces (one command;
//            and one command per trace) + `report --whole` of the job, each
//            under /usr/bin/time, through the bundle; the per-rank overlaps'
//            largest difference; --hta-rounds (3) rounds, order alternating,
//            medians. --hta PATH (a checkout), --hta-python PY; skipped,
//            saying how to install HTA, where it does not import.
//  import-many a job's --import-many-ranks (64) Kineto traces (the real DDP
//            job's, replicated as the hta part does, ~1.7 MB each) imported
//            by one `streamscope import` command (worker threads; and with
//            --workers 0) against one command per trace, --import-many-rounds
//            (3) rounds alternating (bench/import-many.ts); the ratio.
//  serve-flood `streamscope serve` under a flood (issue 27): 20,000 half-open
//            connections, 10,000 requests in parallel without and with the
//            token, and both, while a page's window request goes every 100 ms
//            (bench/serve-flood.ts). Target: every page request answered,
//            p50 and p99 ≤ 1 s. --flood-ops N, --flood-half-open N,
//            --flood-parallel N, --flood-seconds N.
//  responsiveness  the timing properties `npm test` no longer asserts (they
//            depend on the machine's speed and load): the main thread's
//            event-loop utilization while the query worker answers, the
//            frame-trace check's figures, how quickly launches and record jobs
//            fail without Electron or a GPU, the replay of 10 M operations
//            (bench/responsiveness.ts), --responsiveness-rounds each.
//  corpus    the diagnosis on the bug/fix corpus (test/fixtures/corpus: real
//            programs recorded on an H200, each a mistake and its fix, in
//            two rounds): per pair and round the top finding of the mistake,
//            the predicted GPU span of the what-if of the finding naming the
//            fix, the fix's measured span, the error. Targets (issue 25):
//            the top finding names the fix in every pair (or a second mistake
//            the fixed run still has); |error| median ≤ 10%, worst ≤ 25%
//            (test/analysis/corpus.test.ts checks the same).
//  whatif    the what-if replay of 10 M operations, host model + replay,
//            beside one plain pass over the ops' columns (bench/whatif.ts),
//            --whatif-rounds rounds, alternated with an older checkout's
//            code with --whatif-against DIR. Target (issue 16): ≤ 4 s on the
//            2-core development machine.
//
// Options: --only startup|ingest|analysis|import|renderer|selection|merge|overhead|record-wall|live|serve-load|serve-flood|job-summaries|hta|import-many|page|responsiveness|whatif|corpus, --responsiveness-rounds N, --whatif-rounds N, --whatif-against DIR, --startup-rounds N, --wall-rounds N, --serve-ops N, --serve-clients N, --serve-seconds N, --live-launches N, --live-speed X, --renderer-ops N, --selection-ops N, --analysis-launches N, --analysis-rounds N, --import-mb N, --import-rounds N, --launches N (overhead loop), --pairs N,
// --ingest-launches N, --ingest-runs N (ingest and ceiling pairs), --merge-ranks N, --merge-ops N (per rank), --merge-rounds N, --merge-sample N (ranks analysed as a sample),
// --merge-analysis sample|whole|none (whole: also the whole job's analysis, minutes and ~12 GB), --json FILE (write the results).
// --job FILE, --job-rounds N (the job's analysis rank by rank).
// Environment, renderer: STREAMSCOPE_KEEP_TRACE=1 keeps the Chromium trace (its path printed), STREAMSCOPE_TRACE_CATEGORIES=a,b,… traces other categories (to look into a frame).
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import v8 from 'node:v8';
import vm from 'node:vm';
import { devices, Ingest, insertCeiling, loadTimelineColumns } from '../profiler/native/addon.ts';
import { collectorLibraryPath, repoRoot, runnerPath, syntheticStreamToolPath } from '../profiler/native/paths.ts';
import { ONE_HEAP_TUNABLE } from '../profiler/cli/launch.cjs';
import { decodeHeader } from '../profiler/record/decoder.ts';
import { beginBulkLoad, createRecording, endBulkLoad, openRecording } from '../profiler/store/database.ts';
import { analyze, type AnalysisTimings } from '../profiler/analysis/diagnosis/analyze.ts';
import type { AnalysisRun } from './analysis-run.ts';
import { generate } from './generate-recording.ts';
import { generateRanks } from './generate-ranks.ts';
import { benchJobOpen } from './job-open.ts';
import { launchRecording } from './page-findings.ts';
import { evictFromPageCache } from './page-cache.ts';
import { mergeRecordings } from '../profiler/merge/merge.ts';
import { buildReport } from '../profiler/report/report.ts';
import { readProcesses } from '../profiler/store/ranks.ts';
import type { Db } from '../profiler/store/database.ts';
import { mainThreadWorkPerFrame } from './frame-trace.ts';
import { startLiveViewer } from './live-viewer.ts';
import { median, pairedAdded, pairedAddedRatio, quantile } from './stats.ts';
import { gnuTime } from './gnu-time.ts';

const { values } = parseArgs({
  options: {
    only: { type: 'string' },
    launches: { type: 'string', default: '50000' },
    pairs: { type: 'string', default: '30' },
    'ingest-launches': { type: 'string', default: '2000000' },
    'ingest-runs': { type: 'string', default: '5' },
    'analysis-launches': { type: 'string', default: '10000000' },
    'analysis-rounds': { type: 'string', default: '3' },
    'import-mb': { type: 'string', default: '1024' },
    'import-rounds': { type: 'string', default: '3' },
    'renderer-ops': { type: 'string', default: '10000000' },
    'selection-ops': { type: 'string', default: '1000000' },
    'merge-ranks': { type: 'string', default: '64' },
    'merge-ops': { type: 'string', default: '1000000' },
    'merge-rounds': { type: 'string', default: '3' },
    'merge-sample': { type: 'string', default: '8' },
    'merge-analysis': { type: 'string', default: 'sample' },
    job: { type: 'string' },
    'job-rounds': { type: 'string', default: '3' },
    json: { type: 'string' },
    'live-launches': { type: 'string', default: '10000000' },
    'live-speed': { type: 'string', default: '4' },
    'serve-ops': { type: 'string', default: '10000000' },
    'serve-clients': { type: 'string', default: '200' },
    'serve-seconds': { type: 'string', default: '60' },
    'summary-ranks': { type: 'string', default: '1024' },
    'page-launches': { type: 'string', default: '10000000' },
    'page-runs': { type: 'string', default: '2' },
    'summary-ops': { type: 'string', default: '100000' },
    'summary-cold': { type: 'boolean', default: false },
    'summary-rounds': { type: 'string', default: '1' },
    'flood-ops': { type: 'string', default: '1000000' },
    'import-many-ranks': { type: 'string', default: '64' },
    'import-many-rounds': { type: 'string', default: '3' },
    hta: { type: 'string' },
    'hta-python': { type: 'string' },
    'hta-ranks': { type: 'string', default: '8,64' },
    'hta-mb': { type: 'string', default: '0' },
    'hta-rounds': { type: 'string', default: '3' },
    'flood-half-open': { type: 'string', default: '20000' },
    'flood-parallel': { type: 'string', default: '10000' },
    'flood-seconds': { type: 'string', default: '20' },
    'responsiveness-rounds': { type: 'string', default: '5' },
    'whatif-rounds': { type: 'string', default: '5' },
    'whatif-against': { type: 'string' },
    'wall-rounds': { type: 'string', default: '5' },
    'startup-rounds': { type: 'string', default: '20' },
  },
});

// Every benchmark but the analysis's reads its recordings from their files, as their figures always did, and leaves
// the user's column cache alone (profiler/analysis/load/column-cache.ts); the analysis benchmark measures the cache
// beside its absence, in a directory of its own.
process.env.STREAMSCOPE_COLUMN_CACHE ??= 'off';
const results: Record<string, unknown> = { host: os.hostname(), cpus: os.cpus().length, date: new Date().toISOString() };
const lines: string[] = [];

/** Per-table row counts and sums of the rows' values, to show that two recordings hold the same rows. */
function rowDigest(file: string): Record<string, string> {
  const db = openRecording(file, { readonly: true });
  try {
    const out: Record<string, string> = {};
    for (const t of ['strings', 'threads', 'streams', 'kernels', 'memcpys', 'memsets', 'syncs', 'api_calls', 'nvtx_ranges', 'zones']) {
      const cols = (db.prepare(`SELECT name FROM pragma_table_info('${t}')`).all() as { name: string }[]).map((c) => c.name);
      const sums = cols.map((c) => `total(CAST("${c}" AS INTEGER)) || ':' || count("${c}")`).join(" || ',' || ");
      out[t] = String((db.prepare(`SELECT count(*) || '/' || ${sums} AS d FROM ${t}`).get() as { d: string }).d);
    }
    return out;
  } finally {
    db.close();
  }
}

async function benchIngest(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-bench-'));
  try {
    const stream = path.join(dir, 'bench.ssr');
    execFileSync(syntheticStreamToolPath(), ['--out', stream, '--bench-launches', values['ingest-launches']!]);
    const bytes = fs.statSync(stream).size;
    const header = decodeHeader(new Uint8Array(fs.readFileSync(stream).subarray(0, 64)), stream);
    // cpuSeconds: this process's CPU time (all its threads: the ingest runs on a libuv worker), less sensitive than
    // wall time to what else runs on the 2 shared cores.
    type Run = { seconds: number; tablesSeconds: number; cpuSeconds: number };
    // The recorder's path, as `record` runs it: indexes dropped for the
    // load, the rows stored (`store`), the indexes built, the bulk load ended.
    const timed = async (out: string, store: (indexSql: string[]) => Promise<number>): Promise<Run> => {
      const db = createRecording(out);
      const t0 = performance.now();
      const cpu0 = process.cpuUsage();
      const indexSql = beginBulkLoad(db);
      db.close();
      const tablesSeconds = await store(indexSql);
      const again = openRecording(out);
      endBulkLoad(again);
      again.close();
      const cpu = process.cpuUsage(cpu0);
      return { seconds: (performance.now() - t0) / 1000, tablesSeconds, cpuSeconds: (cpu.user + cpu.system) / 1e6 };
    };
    let records = 0;
    const ingestRun = (out: string) =>
      timed(out, async (indexSql) => {
        const t0 = performance.now();
        const ingest = new Ingest(out, { originNs: header.origin_ns });
        const p = await ingest.ingestFile(stream, { final: true });
        const tables = (performance.now() - t0) / 1000;
        await ingest.finish({ finalSql: indexSql });
        records = p.records;
        return tables;
      });
    // Each run writes ~250 MB: drop it and let the kernel write back what
    // is dirty before the next run, or later runs pay for earlier ones
    // (measured: 1.7 s first run, 3.4 s fifth, on this VM).
    const drop = (file: string) => {
      fs.rmSync(file, { force: true });
      execFileSync('sync');
    };
    // The ceiling (issue 16): the same rows, read from a recording this
    // ingest made, stored by SQLite alone through the ingest's statements,
    // pragmas, transactions and batches (native/addon/src/insert_ceiling.h).
    const source = path.join(dir, 'source.sqlite');
    execFileSync('sync');
    await ingestRun(source);
    const ceiling = insertCeiling(source);
    drop(source);
    const ceilingRun = (out: string) => timed(out, async (indexSql) => ceiling.insert(out, { finalSql: indexSql }).rowsSeconds);
    const pairs = Number(values['ingest-runs']);
    const loadBefore = os.loadavg();
    const runs: Run[] = [];
    const ceilingRuns: Run[] = [];
    let identical: boolean | null = null;
    for (let i = 0; i < pairs; i++) {
      // Alternated, each first in every other pair: a slow spell of the VM falls on both.
      // The first file of a pair is gone before the second run: left in
      // the page cache, its 250 MB made the second run of every pair pay
      // for reclaiming it (measured on the quiet VM: whichever ran second
      // took 1.3 x the time and the CPU, ratios 1.19 against 0.67).
      const [a, b] = [path.join(dir, `ingest${i}.sqlite`), path.join(dir, `ceiling${i}.sqlite`)];
      let firstDigest: string | null = null;
      const first = async (run: () => Promise<void>, file: string) => {
        await run();
        if (i === 0) firstDigest = JSON.stringify(rowDigest(file));
        drop(file);
      };
      if (i % 2 === 0) {
        await first(async () => void runs.push(await ingestRun(a)), a);
        ceilingRuns.push(await ceilingRun(b));
        if (i === 0) identical = firstDigest === JSON.stringify(rowDigest(b));
        drop(b);
      } else {
        await first(async () => void ceilingRuns.push(await ceilingRun(b)), b);
        runs.push(await ingestRun(a));
        drop(a);
      }
    }
    const loadAfter = os.loadavg();
    // Median and slowest, not only the best: runs of the same work on this
    // 2-core VM differ by up to 40%, and the target must hold for the slow ones.
    const bySpeed = [...runs].sort((x, y) => x.seconds - y.seconds);
    const mid = bySpeed[Math.floor(bySpeed.length / 2)]!;
    const slow = bySpeed[bySpeed.length - 1]!;
    const rate = records / mid.seconds;
    const slowRate = records / slow.seconds;
    const ceilingRate = records / median(ceilingRuns.map((r) => r.seconds));
    // Per pair: the ingest's rate over the ceiling's, i.e. the ceiling's time over the ingest's.
    const ratios = runs.map((r, i) => ceilingRuns[i]!.seconds / r.seconds);
    const rowRatios = runs.map((r, i) => ceilingRuns[i]!.tablesSeconds / r.tablesSeconds);
    const cpuRatios = runs.map((r, i) => ceilingRuns[i]!.cpuSeconds / r.cpuSeconds);
    results.ingest = {
      records,
      streamBytes: bytes,
      rows: ceiling.rows,
      runs,
      recordsPerSecond: rate,
      slowestRecordsPerSecond: slowRate,
      target: 1.5e6,
      ceiling: { runs: ceilingRuns, recordsPerSecond: ceilingRate, rowsPerSecond: ceiling.rows / median(ceilingRuns.map((r) => r.seconds)) },
      ratios,
      rowRatios,
      cpuRatios,
      medianRatio: median(ratios),
      medianCpuRatio: median(cpuRatios),
      goal: 0.8,
      sameRows: identical,
      loadavg: { before: loadBefore, after: loadAfter },
    };
    const s = (x: number) => `${x.toFixed(2)} s`;
    lines.push(
      `ingest    ${records.toLocaleString('en-US')} records (${(bytes / 2 ** 20).toFixed(0)} MiB, ${ceiling.rows.toLocaleString('en-US')} rows) into an indexed SQLite recording (rows + zones + finish), ${runs.length} runs, each beside the ceiling (SQLite alone storing the same rows${identical === null ? '' : identical ? ', checked identical' : ', NOT IDENTICAL'}), alternated; load ${loadBefore.map((l) => l.toFixed(2)).join(' ')} before, ${loadAfter.map((l) => l.toFixed(2)).join(' ')} after:`,
    );
    runs.forEach((r, i) => {
      const c = ceilingRuns[i]!;
      lines.push(
        `          ${i % 2 === 0 ? 'ingest first ' : 'ceiling first'}  ingest ${s(r.seconds)} (rows ${s(r.tablesSeconds)}) ${(records / r.seconds / 1e6).toFixed(2)} M/s, ceiling ${s(c.seconds)} (rows ${s(c.tablesSeconds)}) ${(records / c.seconds / 1e6).toFixed(2)} M/s: ratio ${ratios[i]!.toFixed(2)} (rows alone ${rowRatios[i]!.toFixed(2)}; CPU ${r.cpuSeconds.toFixed(2)} s against ${c.cpuSeconds.toFixed(2)} s: ${cpuRatios[i]!.toFixed(2)})`,
      );
    });
    lines.push(
      `          median ${(rate / 1e6).toFixed(2)} M records/s = ${(rate / 1.5e6).toFixed(2)} × the 1.5 M/s target; slowest ${(slowRate / 1e6).toFixed(2)} M/s = ${(slowRate / 1.5e6).toFixed(2)} ×; ceiling median ${(ceilingRate / 1e6).toFixed(2)} M/s; ratio median ${median(ratios).toFixed(2)} (goal ≥ 0.8), in CPU time ${median(cpuRatios).toFixed(2)}`,
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function runLoop(env: NodeJS.ProcessEnv, launches: string): number {
  const out = execFileSync(runnerPath(), ['--workload', 'launch-loop', '--scenario', 'concurrent', '--streams', '4', '--iterations', launches], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
  const m = /us_per_launch=([\d.]+)/.exec(out);
  if (!m) throw new Error(`launch-loop printed no timing:\n${out}`);
  return Number(m[1]);
}

function benchOverhead(): void {
  const launches = values.launches!;
  const pairs = Number(values.pairs);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-bench-'));
  const cli = path.join(repoRoot, 'profiler/cli/streamscope.ts');
  const plain: number[] = [];
  const floor: number[] = [];
  const streamscope: number[] = [];
  /** StreamScope with a live viewer reading the recording as it grows (issue 14: bench/live-viewer.ts). */
  const live: number[] = [];
  try {
    // Interleaved, so drifts in clocks or load hit every mode alike; the
    // order rotates every round so that no mode always runs first.
    const modes = [
      () => plain.push(runLoop({}, launches)),
      () => {
        const floorDir = fs.mkdtempSync(path.join(dir, 'floor-'));
        floor.push(runLoop({ CUDA_INJECTION64_PATH: collectorLibraryPath(), STREAMSCOPE_OUTPUT_DIR: floorDir, STREAMSCOPE_DISCARD: '1' }, launches));
      },
      () => {
        const rec = path.join(dir, `run${streamscope.length}.sqlite`);
        const out = execFileSync(
          process.execPath,
          [cli, 'record', '-q', '-o', rec, '--workload', 'launch-loop', '--scenario', 'concurrent', '--streams', '4', '--iterations', launches],
          { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
        );
        streamscope.push(Number(/us_per_launch=([\d.]+)/.exec(out)![1]));
        fs.rmSync(rec, { force: true });
      },
      () => {
        const rec = path.join(dir, `live${live.length}.sqlite`);
        const viewer = startLiveViewer(rec);
        try {
          const out = execFileSync(
            process.execPath,
            [cli, 'record', '-q', '-o', rec, '--workload', 'launch-loop', '--scenario', 'concurrent', '--streams', '4', '--iterations', launches],
            { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
          );
          live.push(Number(/us_per_launch=([\d.]+)/.exec(out)![1]));
        } finally {
          viewer.stop();
        }
        fs.rmSync(rec, { force: true });
      },
    ];
    for (let i = 0; i < pairs; i++) {
      for (let k = 0; k < modes.length; k++) modes[(i + k) % modes.length]!();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  let torch: { plain: number[]; profiled: number[] } | null = null;
  try {
    const out = execFileSync('python3', [path.join(repoRoot, 'bench/torch_launch_loop.py'), '--launches', launches, '--pairs', String(Math.min(pairs, 3))], {
      encoding: 'utf8',
    });
    const j = JSON.parse(out.trim().split('\n').at(-1)!) as { torch_us_per_launch_plain: number[]; torch_us_per_launch_profiled: number[] };
    torch = { plain: j.torch_us_per_launch_plain, profiled: j.torch_us_per_launch_profiled };
  } catch (err) {
    lines.push(`overhead  torch.profiler comparison not run: ${(err as Error).message.split('\n')[0]}`);
  }
  // Added cost per launch, taken within each interleaved round (so drifts in
  // clocks or load between rounds cancel), as a trimmed mean over many short
  // rounds: a run's cost falls in one of two clusters (stats.ts), so a median
  // of few long rounds jumps between them.
  const base = median(plain);
  const est = pairedAddedRatio(plain, floor, streamscope);
  const liveAdded = pairedAdded(plain, live).added;
  results.overhead = {
    launches: Number(launches),
    pairs,
    usPerLaunch: { plain, floor, streamscope, live },
    liveAddedUs: liveAdded,
    torch,
    floorAddedUs: est.aAdded,
    streamscopeAddedUs: est.bAdded,
    ratio: est.ratio,
    ratioInterval90: [est.low, est.high],
    estimator: 'trimmed mean (10% each end) of per-round differences; interval: bootstrap over rounds',
    target: 1.05,
  };
  const fmt = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(' ');
  lines.push(
    `overhead  µs per launch (${launches} launches over 4 streams, ${pairs} interleaved rounds; added = trimmed mean of per-round differences, 90% interval by resampling rounds)`,
  );
  lines.push(`            no tracing      median ${base.toFixed(2)}   [${fmt(plain)}]`);
  lines.push(`            CUPTI floor     median ${median(floor).toFixed(2)}   [${fmt(floor)}]  added ${est.aAdded.toFixed(2)}`);
  lines.push(`            StreamScope     median ${median(streamscope).toFixed(2)}   [${fmt(streamscope)}]  added ${est.bAdded.toFixed(2)}`);
  if (torch) {
    const tAdded = median(torch.profiled) - median(torch.plain);
    lines.push(`            torch (plain)   ${median(torch.plain).toFixed(2)}   [${fmt(torch.plain)}]`);
    lines.push(`            torch.profiler  ${median(torch.profiled).toFixed(2)}   [${fmt(torch.profiled)}]  added ${tAdded.toFixed(2)}`);
  }
  lines.push(`          StreamScope added / floor added = ${est.ratio.toFixed(2)} (90% interval ${est.low.toFixed(2)}–${est.high.toFixed(2)}; target ≤ 1.05)`);
  lines.push(
    `          with a live viewer reading the recording as it grows: median ${median(live).toFixed(2)} µs [${fmt(live)}], added ${liveAdded.toFixed(2)} (issue 14: unchanged within noise)`,
  );
}

/**
 * analysis: the diagnosis of a 10-million-operation recording (10 M kernel
 * launches: 10 M kernels and 10 M API calls, from the C++ encoder's
 * launch-bound stream, ingested natively). Target: < 5 s. The recording's
 * first analysis first (no column cache entry yet; it writes one while it
 * runs), its pages out of the page cache (page-cache.ts); then cold (the
 * recording's and the entry's pages evicted); then warm, three runs, each
 * beside the same without the cache. Each beside the load average as it
 * began (the machine is shared with other benchmarks).
 */
async function benchAnalysis(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-bench-'));
  try {
    const launches = values['analysis-launches']!;
    const out = path.join(dir, 'big.sqlite');
    launchRecording(out, Number(launches));
    const runs: number[] = [];
    const runLoads: number[] = [];
    const phases: AnalysisTimings[] = [];
    // Scopes side by side, each a whole analysis from the file: the whole
    // recording (no start-up detection's cut), the steady state (the default:
    // detection, and here no start-up, so no cut), and a window from 10% of
    // the span to its end (a cut: the selection work a scope adds).
    const scoped: { whole: number[]; window: number[] } = { whole: [], window: [] };
    let ops = 0;
    let findings = 0;
    // Each timed analysis a process of its own (analysis-run.ts), as a user's command: a second analysis in one process
    // ran up to 1.5x slower on the development VM, faulting in again the pages the first one's arrays handed back.
    // Bundled as the `streamscope` command runs (app/vite.config.ts --mode bench): from the sources, each of its two
    // threads first has Node strip the types of ~200 modules (a WebAssembly module, compiled in the background), the
    // what-if thread's while the load runs on both cores: 0.1 s more per analysis on the development VM.
    // With one malloc arena for all its threads, as the `streamscope` command starts a one-shot one (profiler/cli/launch.cjs):
    // else the what-if thread's heap is whichever of Node's arenas comes next, and one of its own cost 0.3 – 0.5 s.
    const runScript = bundleAnalysisRun();
    // The column cache (profiler/analysis/load/column-cache.ts) in a directory of the benchmark's own: the first analysis
    // writes the recording's entry while it runs, and every later one maps it, as a user's second command does. Beside
    // each warm run, the same without it (STREAMSCOPE_COLUMN_CACHE=off: the recording read and ordered anew).
    const cacheDir = path.join(dir, 'cache');
    const env = {
      ...process.env,
      STREAMSCOPE_CACHE_DIR: cacheDir,
      STREAMSCOPE_COLUMN_CACHE: 'on',
      GLIBC_TUNABLES: [ONE_HEAP_TUNABLE, process.env.GLIBC_TUNABLES].filter(Boolean).join(':'),
    };
    let lastProcessSeconds = 0;
    const timed = (scope: 'steady-state' | 'whole' | 'window', here = false, script = runScript, cache = true): AnalysisRun => {
      const t0 = performance.now();
      const got = execFileSync(process.execPath, [script, out, '--scope', scope, ...(here ? ['--here'] : [])], {
        encoding: 'utf8',
        maxBuffer: 1 << 20,
        env: cache ? env : { ...env, STREAMSCOPE_COLUMN_CACHE: 'off' },
      });
      lastProcessSeconds = (performance.now() - t0) / 1000;
      return JSON.parse(got) as AnalysisRun;
    };
    const entries = () =>
      fs.existsSync(path.join(cacheDir, 'columns')) ? fs.readdirSync(path.join(cacheDir, 'columns')).filter((f) => f.endsWith('.columns')) : [];
    const sourceScript = path.join(import.meta.dirname, 'analysis-run.ts');
    // Beside each warm run, the same from the sources (what `node bench/analysis-run.ts` times).
    const fromSources: number[] = [];
    // Beside each warm run, the same analysis with every what-if on the analysing thread (no second thread: `--here`).
    const here: number[] = [];
    // The first analysis of the recording (no cache entry yet), its pages out of the page cache: what a user's first
    // command takes; it writes the entry meanwhile, and its process exits once that is on disk (the seconds after).
    evictFromPageCache(out);
    const firstRun = timed('steady-state');
    const first = {
      seconds: firstRun.seconds,
      phasesMs: firstRun.phasesMs,
      loadAverage1m: firstRun.loadAverage1m,
      entryWrittenSeconds: lastProcessSeconds - firstRun.seconds,
    };
    const entry = entries().map((f) => path.join(cacheDir, 'columns', f))[0];
    if (!entry) throw new Error(`analysis: the first analysis wrote no column cache entry in ${cacheDir}`);
    // Cold (issue 30: ≤ 4 s): the recording's pages and its entry's out of the page cache, the process's first analysis.
    evictFromPageCache(out);
    evictFromPageCache(entry);
    const coldRun = timed('steady-state');
    const cold = coldRun.seconds;
    const coldTimings = coldRun.phasesMs;
    const coldLoad = coldRun.loadAverage1m;
    // Warm without the cache, beside each warm run.
    const uncached: number[] = [];
    // The anchor (issue 16): the native load alone through SQLite and through the file's pages, five pairs
    // alternating, each after a full collection (the last load's 1.3 GB of arrays freed first, not during it).
    const loads: { sql: number[]; pages: number[] } = { sql: [], pages: [] };
    let via = '';
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    for (let i = 0; i < 5; i++) {
      for (const how of i % 2 === 0 ? (['sql', 'pages'] as const) : (['pages', 'sql'] as const)) {
        gc();
        const t0 = performance.now();
        const got = loadTimelineColumns(out, { via: how }).via;
        loads[how].push((performance.now() - t0) / 1000);
        if (how === 'pages') via = got;
      }
    }
    gc();
    const rounds = Number(values['analysis-rounds']);
    for (let i = 0; i < rounds; i++) {
      const steady = timed('steady-state');
      uncached.push(timed('steady-state', false, runScript, false).seconds);
      fromSources.push(timed('steady-state', false, sourceScript).seconds);
      here.push(timed('steady-state', true).seconds);
      runLoads.push(steady.loadAverage1m);
      runs.push(steady.seconds);
      phases.push(steady.phasesMs);
      ops = steady.operations;
      findings = steady.findings;
      // The scopes like for like, each with its what-ifs on the analysing thread: a window's clipped columns are
      // copies, which the second thread is not handed (analyze.ts), and the ratios are of the selection's cost, not
      // the thread's.
      scoped.whole.push(timed('whole', true).seconds);
      scoped.window.push(timed('window', true).seconds);
    }
    const mid = median(runs);
    const midPhases = phases[runs.indexOf(mid)]!;
    // Ratios of the runs side by side, round by round, then their median: on the development VM the cost of fresh
    // memory drifts by a third within minutes (the host takes freed pages back), and medians of runs minutes apart
    // took that drift for the selection's cost (window / whole 1.21 in one run, 1.01 – 1.06 alternated by hand).
    const perRound = (a: number[], b: number[]) => median(a.map((x, i) => x / b[i]!));
    const ratio = { steady: perRound(here, scoped.whole), window: perRound(scoped.window, scoped.whole), thread: perRound(here, runs) };
    const pagesOverSql = median(loads.pages) / median(loads.sql);
    results.analysis = {
      operations: ops,
      first: { ...first, goal: 4 },
      cold: { seconds: cold, phasesMs: coldTimings, loadAverage1m: coldLoad, goal: 4 },
      withoutColumnCache: { runs: uncached, medianSeconds: median(uncached), cacheFaster: perRound(uncached, runs) },
      columnCacheEntryBytes: fs.statSync(entry).size,
      process: 'each timed analysis a process of its own (bench/analysis-run.ts, bundled: bench/dist/analysis-run.cjs)',
      fromSources: { runs: fromSources, medianSeconds: median(fromSources), bundleFaster: perRound(fromSources, runs) },
      whatIfsHere: { runs: here, medianSeconds: median(here), secondThreadFaster: ratio.thread },
      runs,
      runLoadAverages1m: runLoads,
      phasesMs: phases,
      medianSeconds: mid,
      warmGoal: 2,
      cores: os.availableParallelism(),
      target: 5,
      goal: 4,
      loadSeconds: { sql: loads.sql, pages: loads.pages, pagesOverSql, via },
      loadAverage: os.loadavg(),
      scopes: { wholeSeconds: scoped.whole, windowSeconds: scoped.window, steadyOverWhole: ratio.steady, windowOverWhole: ratio.window, target: 1.1 },
    };
    lines.push(
      `analysis  ${ops.toLocaleString('en-US')} GPU operations (+ as many API calls) diagnosed in ${runs.map((r) => r.toFixed(2)).join(', ')} s (${findings} findings, ${os.availableParallelism()} cores)`,
    );
    const phaseList = (t: AnalysisTimings) =>
      Object.entries(t)
        .map(([k, v]) => `${k} ${(v / 1000).toFixed(2)} s`)
        .join(', ');
    lines.push(
      `          first (no column cache entry yet, its pages out of the page cache): ${first.seconds.toFixed(2)} s (load ${first.loadAverage1m.toFixed(2)}; goal ≤ 4 s): ${phaseList(first.phasesMs)}; its entry (${(fs.statSync(entry).size / 2 ** 30).toFixed(2)} GiB) written meanwhile, the process gone ${first.entryWrittenSeconds.toFixed(2)} s after`,
    );
    lines.push(
      `          cold (the recording's and its entry's pages out of the page cache, the process's first analysis): ${cold.toFixed(2)} s (load ${coldLoad.toFixed(2)}; goal ≤ 4 s): ${phaseList(coldTimings)}`,
    );
    lines.push(
      `          warm, a process each: ${runs.map((r, i) => `${r.toFixed(2)} s (load ${runLoads[i]!.toFixed(2)})`).join(', ')}: median ${mid.toFixed(2)}, spread ${(((Math.max(...runs) - Math.min(...runs)) / mid) * 100).toFixed(0)} % (goal ≤ 2 s)`,
    );
    lines.push(
      `          without the column cache (the recording read and ordered anew), beside each: ${uncached.map((r) => r.toFixed(2)).join(', ')} s: median ${median(uncached).toFixed(2)} (the cache ${perRound(uncached, runs).toFixed(2)} × faster, round by round)`,
    );
    lines.push(
      `          the same from the sources (types stripped at load), beside each: ${fromSources.map((r) => r.toFixed(2)).join(', ')} s: median ${median(fromSources).toFixed(2)} (the bundle ${perRound(fromSources, runs).toFixed(2)} × faster, round by round)`,
    );
    lines.push(
      `          the what-ifs on the analysing thread (no second thread), beside each: ${here.map((r) => r.toFixed(2)).join(', ')} s: median ${median(here).toFixed(2)} (the second thread ${ratio.thread.toFixed(2)} × faster, round by round)`,
    );
    lines.push(
      `          load alone: SQL loader ${loads.sql.map((r) => r.toFixed(2)).join(', ')} s, page loader ${loads.pages.map((r) => r.toFixed(2)).join(', ')} s (${via}); pages / SQL = ${pagesOverSql.toFixed(2)} (medians)`,
    );
    lines.push(
      `          median ${mid.toFixed(2)} s = ${(mid / 4).toFixed(2)} × the 4 s goal (issue 16), ${(mid / 5).toFixed(2)} × the 5 s budget; load average ${os
        .loadavg()
        .map((x) => x.toFixed(2))
        .join(' ')}; its phases: ${phaseList(midPhases)}`,
    );
    lines.push(
      `          scopes, the what-ifs on the analysing thread in each: whole ${scoped.whole.map((r) => r.toFixed(2)).join(', ')} s; window 10%..end ${scoped.window.map((r) => r.toFixed(2)).join(', ')} s`,
    );
    lines.push(
      `          steady state (start-up detection) / whole = ${ratio.steady.toFixed(2)}, window scope / whole = ${ratio.window.toFixed(2)} (each the median of the rounds' own ratios; target ≤ 1.10)`,
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Bundles bench/analysis-run.ts and the what-if worker it starts into bench/dist (app/vite.config.ts --mode bench) and
 * returns the script to run. Built each time: a second or so, and never a stale bundle timed.
 */
function bundleAnalysisRun(): string {
  const vite = path.join(repoRoot, 'node_modules/vite/bin/vite.js');
  execFileSync(process.execPath, [vite, 'build', '-c', 'app/vite.config.ts', '--mode', 'bench'], { cwd: repoRoot, stdio: 'pipe' });
  return path.join(repoRoot, 'bench/dist/analysis-run.cjs');
}

/**
 * import: a ~1 GB Chrome trace (Kineto conventions, generated) imported as a
 * stream; peak memory of the importing process against the file size. Each
 * round imports it cold (the trace's pages out of the page cache: issue 30's
 * ≤ 6 s on the 2-core machine), then warm.
 */
async function benchImport(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-bench-'));
  try {
    const json = path.join(dir, 'big.json');
    const target = Number(values['import-mb']) * 2 ** 20;
    const fd = fs.openSync(json, 'w');
    fs.writeSync(fd, '{"schemaVersion": 1, "traceEvents": [\n');
    let written = 0;
    let n = 0;
    const chunk: string[] = [];
    while (written < target) {
      const ts = 1000 + n * 2;
      const ev =
        n % 2 === 0
          ? { ph: 'X', cat: 'cuda_runtime', name: 'cudaLaunchKernel', pid: 1, tid: 1, ts, dur: 1.5, args: { cbid: 211, correlation: n } }
          : {
              ph: 'X',
              cat: 'kernel',
              name: 'void kernel_with_a_realistically_long_templated_name<float, 128>(float*, int)',
              pid: 0,
              tid: 7 + (n % 8),
              ts: ts + 3,
              dur: 1.2,
              args: {
                device: 0,
                context: 1,
                stream: 7 + (n % 8),
                correlation: n - 1,
                grid: [128, 1, 1],
                block: [256, 1, 1],
                'registers per thread': 32,
                'shared memory': 0,
              },
            };
      const line = (n ? ',\n' : '') + JSON.stringify(ev);
      chunk.push(line);
      written += line.length;
      n++;
      if (chunk.length === 10000) fs.writeSync(fd, chunk.splice(0).join(''));
    }
    fs.writeSync(fd, chunk.join('') + '\n]}\n');
    fs.closeSync(fd);
    const bytes = fs.statSync(json).size;
    const out = path.join(dir, 'big.sqlite');
    // The anchor, measured in the same run: reading the file once (1 MiB
    // reads, nothing parsed), what any importer must at least do. Each
    // round reads it, then imports it in a child process (its peak resident
    // memory is the importer's alone), --import-rounds times.
    const readOnce = (): number => {
      const t = performance.now();
      const fd = fs.openSync(json, 'r');
      const buf = Buffer.alloc(1 << 20);
      while (fs.readSync(fd, buf, 0, buf.length, null) > 0);
      fs.closeSync(fd);
      return (performance.now() - t) / 1000;
    };
    // And from the disk itself: O_DIRECT bypasses the page cache that holds the file just written (dd, 8 MiB reads).
    const readDirect = (): number => {
      const t = performance.now();
      const r = spawnSync('dd', [`if=${json}`, 'of=/dev/null', 'bs=8M', 'iflag=direct'], { encoding: 'utf8' });
      return r.status === 0 ? (performance.now() - t) / 1000 : NaN;
    };
    // One import in a child process (its peak resident memory is the importer's alone): seconds, peak bytes, load.
    const importOnce = (): { seconds: number; peakRssBytes: number; load: number } => {
      fs.rmSync(out, { force: true });
      const load = os.loadavg()[0]!;
      const t0 = performance.now();
      const r = spawnSync(gnuTime(), ['-f', '%M', process.execPath, path.join(repoRoot, 'profiler/cli/streamscope.ts'), 'import', json, '-o', out], {
        encoding: 'utf8',
      });
      if (r.status !== 0) throw new Error(`import failed: ${r.stderr}`);
      const peakKb = Number(/(\d+)\s*$/.exec(r.stderr)?.[1] ?? NaN);
      return { seconds: (performance.now() - t0) / 1000, peakRssBytes: peakKb * 1024, load };
    };
    const rounds: {
      readSeconds: number;
      diskSeconds: number;
      seconds: number;
      peakRssBytes: number;
      load: number;
      cold: { seconds: number; peakRssBytes: number; load: number };
    }[] = [];
    for (let i = 0; i < Number(values['import-rounds']); i++) {
      const diskSeconds = readDirect();
      evictFromPageCache(json); // its pages only (page-cache.ts): Node and the sources stay cached
      const cold = importOnce();
      const readSeconds = readOnce();
      rounds.push({ readSeconds, diskSeconds, ...importOnce(), cold });
    }
    const mid = median(rounds.map((r) => r.seconds));
    const midCold = median(rounds.map((r) => r.cold.seconds));
    const midRead = median(rounds.map((r) => r.readSeconds));
    const midDisk = median(rounds.map((r) => r.diskSeconds));
    const peak = Math.max(...rounds.flatMap((r) => [r.peakRssBytes, r.cold.peakRssBytes]));
    results.import = {
      bytes,
      events: n,
      rounds,
      medianSeconds: mid,
      medianColdSeconds: midCold,
      coldGoal: 6,
      medianReadSeconds: midRead,
      overRead: mid / midRead,
      medianDiskSeconds: midDisk,
      overDisk: mid / midDisk,
      target: 10,
      overTarget: mid / 10,
      peakRssBytes: peak,
      peakOverFile: peak / bytes,
      peakTarget: 0.3,
    };
    lines.push(
      `import    ${(bytes / 2 ** 20).toFixed(0)} MiB Chrome trace (${n.toLocaleString('en-US')} events) imported in ${rounds.map((r) => r.seconds.toFixed(1)).join(', ')} s ` +
        `(load average ${rounds.map((r) => r.load.toFixed(1)).join(', ')})`,
    );
    lines.push(
      `          median ${mid.toFixed(2)} s = ${(mid / 10).toFixed(2)} × the 10 s goal = ${(mid / midRead).toFixed(1)} × reading the file once (${midRead.toFixed(2)} s, ` +
        `${(bytes / 2 ** 20 / midRead).toFixed(0)} MiB/s, same run); ${(bytes / 2 ** 20 / mid).toFixed(0)} MiB/s`,
    );
    lines.push(
      `          = ${(mid / midDisk).toFixed(1)} × reading it once from the disk, past the page cache (O_DIRECT: ${midDisk.toFixed(2)} s, ${(bytes / 2 ** 20 / midDisk).toFixed(0)} MiB/s, same run)`,
    );
    lines.push(
      `          cold (the trace's pages evicted first): ${rounds.map((r) => `${r.cold.seconds.toFixed(1)} s (load ${r.cold.load.toFixed(1)})`).join(', ')}; ` +
        `median ${midCold.toFixed(2)} s (issue 30's goal ≤ 6 s)`,
    );
    lines.push(`          peak memory ${(peak / 2 ** 20).toFixed(0)} MiB = ${(peak / bytes).toFixed(2)} × the file (goal ≤ 0.30)`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * renderer: a generated recording of 10 M operations over 64 streams, served
 * in browser mode and opened in Debian's Chromium (playwright-core): time to
 * the first complete frame, then per frame while panning and zooming the
 * main thread's work and the frame-to-frame time, JS heap.
 * Targets: open < 2 s, p95 frame ≤ 16 ms, memory < 1 GB.
 */
async function benchRenderer(): Promise<void> {
  const ops = Number(values['renderer-ops']);
  const file = path.join(os.tmpdir(), `streamscope-bench-${ops}-64.sqlite`);
  if (!fs.existsSync(file)) {
    const t = performance.now();
    generate(file, ops, 64);
    lines.push(
      `renderer  generated ${ops.toLocaleString('en-US')} operations over 64 streams in ${((performance.now() - t) / 1000).toFixed(0)} s (${file}, kept for the next run)`,
    );
  }
  // Loaded here: the GPU machine runs the other benchmarks without Playwright.
  const { launch, serve } = await import('../test/e2e/browser.ts');
  const server = await serve([file]);
  const browser = await launch();
  try {
    const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Performance.enable');
    const t0 = performance.now();
    await page.goto(server.url);
    await page.waitForFunction(() => (window.__streamscope?.dataFrames ?? 0) > 0, undefined, { timeout: 120_000 });
    const openS = (performance.now() - t0) / 1000;
    // Pan and zoom, one change per animation frame (as a held key or a
    // wheel does), twice: untraced for the frame-to-frame times (what the
    // user sees; vsync puts their floor at 16.7 ms), then under a Chromium
    // trace for the main thread's work per frame (what must fit in the
    // 16 ms budget; the trace's own cost would distort the first measure).
    const panZoom = () =>
      page.evaluate(async () => {
        const keys = ['w', 'w', 'w', 'd', 'd', 'a', 's', 'd', 'w', 'a'];
        const times: number[] = [];
        let last = performance.now();
        for (let i = 0; i < 120; i++) {
          window.dispatchEvent(new KeyboardEvent('keydown', { key: keys[i % keys.length] }));
          await new Promise((r) => requestAnimationFrame(() => r(null)));
          const now = performance.now();
          times.push(now - last);
          last = now;
        }
        // Until the last answers are in and drawn: their cost belongs to the run.
        while (!window.__streamscope!.idle()) await new Promise((r) => setTimeout(r, 20));
        await new Promise((r) => requestAnimationFrame(() => r(null)));
        return times;
      });
    const home = () =>
      page.evaluate(() => {
        for (let i = 0; i < 6; i++) window.dispatchEvent(new KeyboardEvent('keydown', { key: 's' }));
      });
    const frameMs = await panZoom();
    await home();
    await page.waitForFunction(() => window.__streamscope!.idle());
    const tracePath = path.join(os.tmpdir(), `streamscope-bench-trace-${process.pid}.json`);
    await browser.startTracing(page, { path: tracePath, categories: process.env.STREAMSCOPE_TRACE_CATEGORIES?.split(',') ?? ['toplevel', 'cc', 'benchmark'] });
    await panZoom();
    await browser.stopTracing();
    const { wallMs: workMs, cpuMs } = mainThreadWorkPerFrame(JSON.parse(fs.readFileSync(tracePath, 'utf8')));
    if (process.env.STREAMSCOPE_KEEP_TRACE) lines.push(`          trace kept: ${tracePath}`);
    else fs.rmSync(tracePath, { force: true });
    const p95 = quantile(frameMs, 0.95);
    const metrics = (await cdp.send('Performance.getMetrics')).metrics as { name: string; value: number }[];
    const heap = metrics.find((m) => m.name === 'JSHeapUsedSize')?.value ?? NaN;
    results.renderer = {
      operations: ops,
      streams: 64,
      openSeconds: openS,
      frameMs,
      p95FrameMs: p95,
      workMs,
      p95WorkMs: quantile(workMs, 0.95),
      cpuMs,
      p95CpuMs: quantile(cpuMs, 0.95),
      jsHeapBytes: heap,
      targets: { openSeconds: 2, p95FrameMs: 16, memoryBytes: 2 ** 30 },
    };
    lines.push(
      `renderer  ${ops.toLocaleString('en-US')} operations over 64 streams in Chromium: open to first complete frame ${openS.toFixed(2)} s (target < 2 s)`,
    );
    lines.push(
      `          pan/zoom, ${frameMs.length} view changes: main-thread work per frame p50 ${quantile(workMs, 0.5).toFixed(1)} ms, p95 ${quantile(workMs, 0.95).toFixed(1)} ms, max ${Math.max(...workMs).toFixed(0)} ms (target p95 ≤ 16 ms)`,
    );
    lines.push(
      `          of it on a CPU (thread time; the rest waited for a core): p50 ${quantile(cpuMs, 0.5).toFixed(1)} ms, p95 ${quantile(cpuMs, 0.95).toFixed(1)} ms, max ${Math.max(...cpuMs).toFixed(0)} ms`,
    );
    lines.push(
      `          frame-to-frame p50 ${quantile(frameMs, 0.5).toFixed(1)} ms, p95 ${p95.toFixed(1)} ms (60 Hz vsync: 16.7 ms at best); JS heap ${(heap / 2 ** 20).toFixed(0)} MiB (target < 1 GiB)`,
    );
  } finally {
    await browser.close();
    await server.close();
  }
}

/**
 * selection: a generated recording of 1 M operations over 64 streams, served
 * in browser mode. The whole recording's findings first (the first call
 * loads the columns the later ones share), then the steady state's; then
 * selections of 1 %, 10 %, 25 % and 50 % of the GPU span, three windows of
 * each size at different places (each a new scope: nothing cached), timed
 * as the page asks for them (findings and scopeInfo together) over HTTP;
 * then in Chromium, from releasing the mouse after a drag on the ruler to
 * the findings panel showing that window's answer, the 150 ms the page
 * waits for the selection to rest included. Target: < 300 ms.
 */
async function benchSelection(): Promise<void> {
  const ops = Number(values['selection-ops']);
  const file = path.join(os.tmpdir(), `streamscope-bench-${ops}-64.sqlite`);
  if (!fs.existsSync(file)) {
    const t = performance.now();
    generate(file, ops, 64);
    lines.push(
      `selection generated ${ops.toLocaleString('en-US')} operations over 64 streams in ${((performance.now() - t) / 1000).toFixed(0)} s (${file}, kept for the next run)`,
    );
  }
  const { callApi, launch, openApp, serve } = await import('../test/e2e/browser.ts');
  const server = await serve([file]);
  const browser = await launch();
  try {
    const id = (await callApi<{ recordingId: string }[]>(server, 'listRecordings'))[0]!.recordingId;
    const timed = async (scope: unknown) => {
      const t = performance.now();
      await Promise.all([callApi(server, 'findings', id, scope), callApi(server, 'scopeInfo', id, scope)]);
      return performance.now() - t;
    };
    const wholeMs = await timed({ kind: 'whole' });
    const steadyMs = await timed({ kind: 'steady-state' });
    const { startNs, endNs } = await callApi<{ startNs: number; endNs: number }>(server, 'summary', id);
    const span = endNs - startNs;
    const sizes = [0.01, 0.1, 0.25, 0.5];
    const http: Record<string, number[]> = {};
    for (const size of sizes) {
      http[size] = [];
      for (const at of [0.1, 0.3, 0.45]) {
        const a = Math.round(startNs + span * at);
        http[size].push(await timed({ kind: 'window', startNs: a, endNs: Math.round(a + span * size) }));
      }
    }
    // In the page: drags on the ruler over a tenth and a quarter of the view, three of each.
    const page = await openApp(browser, `${server.url}#rec=${id}`, { width: 1600, height: 1000 });
    await page.waitForSelector('[data-testid="findings"][data-pending="false"]', { timeout: 120_000 });
    const ruler = (await page.locator('[data-testid="ruler"]').boundingBox())!;
    const inPage: Record<string, number[]> = {};
    for (const size of [0.1, 0.25]) {
      inPage[size] = [];
      for (const at of [0.12, 0.33, 0.5]) {
        const before = await page.locator('[data-testid="findings"]').getAttribute('data-scope');
        await page.mouse.move(ruler.x + ruler.width * at, ruler.y + 12);
        await page.mouse.down();
        await page.mouse.move(ruler.x + ruler.width * (at + size), ruler.y + 12, { steps: 4 });
        await page.mouse.up();
        const t = performance.now();
        await page.waitForFunction(
          (b) => {
            const el = document.querySelector('[data-testid="findings"]');
            const s = el?.getAttribute('data-scope') ?? '';
            return s.startsWith('window:') && s !== b && el?.getAttribute('data-pending') === 'false';
          },
          before,
          { timeout: 60_000, polling: 'raf' },
        );
        inPage[size].push(performance.now() - t);
      }
    }
    const fmt = (xs: number[]) => `${median(xs).toFixed(0)} ms`;
    results.selection = { operations: ops, streams: 64, wholeMs, steadyMs, httpMs: http, inPageMs: inPage, debounceMs: 150, target: 300 };
    lines.push(
      `selection ${ops.toLocaleString('en-US')} operations over 64 streams: whole-recording findings ${(wholeMs / 1000).toFixed(2)} s (first call, loads the columns), steady state ${(steadyMs / 1000).toFixed(2)} s`,
    );
    lines.push(
      `          a selection's findings over HTTP (median of 3 windows [each]; target < 300 ms): ${sizes.map((z) => `${z * 100}% of the span ${fmt(http[z]!)} [${http[z]!.map((x) => x.toFixed(0)).join(' ')}]`).join(', ')}`,
    );
    lines.push(
      `          in Chromium, mouse up on the ruler → findings shown (150 ms debounce included): ${Object.entries(inPage)
        .map(([z, xs]) => `${Number(z) * 100}% of the view ${fmt(xs)} [${xs.map((x) => x.toFixed(0)).join(' ')}]`)
        .join(', ')}`,
    );
  } finally {
    await browser.close();
    await server.close();
  }
}

/**
 * The floor of any merge: every row of every rank's rowid tables copied by
 * SQLite into one new recording (ATTACH, then INSERT OR IGNORE … SELECT of
 * every column but the id, which SQLite assigns), nothing rewritten, nothing
 * looked up; the same settings as merge's output (no journal, no sync until
 * the end, no foreign-key checks, the same cache) and the same fsync at the
 * end. Returns seconds and rows copied.
 */
function copyFloor(files: string[], out: string): { seconds: number; rows: number } {
  const t0 = performance.now();
  const db: Db = createRecording(out, { overwrite: true });
  let rows = 0;
  try {
    db.pragma('foreign_keys = OFF');
    db.pragma('journal_mode = OFF');
    db.pragma('synchronous = OFF');
    db.pragma('cache_size = -262144');
    beginBulkLoad(db);
    const tables = (db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND sql NOT LIKE '%WITHOUT ROWID%'").pluck().all() as string[]).filter(
      (t) => !t.startsWith('sqlite_'),
    );
    const columns = new Map(tables.map((t) => [t, (db.prepare('SELECT name FROM pragma_table_info(?)').pluck().all(t) as string[]).filter((c) => c !== 'id')]));
    for (const file of files) {
      db.prepare('ATTACH DATABASE ? AS src').run(file);
      db.exec('BEGIN');
      for (const t of tables) {
        const c = columns.get(t)!.join(', ');
        // OR IGNORE: strings, devices, contexts and streams are unique by value, and the ranks' are alike.
        rows += db.prepare(`INSERT OR IGNORE INTO main.${t} (${c}) SELECT ${c} FROM src.${t}`).run().changes;
      }
      db.exec('COMMIT');
      db.exec('DETACH DATABASE src');
    }
  } finally {
    db.close();
  }
  const fd = fs.openSync(out, 'r+');
  fs.fsyncSync(fd);
  fs.closeSync(fd);
  return { seconds: (performance.now() - t0) / 1000, rows };
}

/**
 * The fastest SQLite-level copy of a finished merge's rows: every table of
 * the merged recording moved into a new file by SQLite's transfer copy
 * (`INSERT INTO t SELECT * FROM src.t`: each stored record copied as it is,
 * nothing decoded, rewritten or encoded), the output's settings and fsync.
 * What the merging thread itself does for the inputs the worker rewrote: a
 * merge that writes one file through SQLite's tables cannot go below it.
 */
function transferFloor(merged: string, out: string): number {
  const t0 = performance.now();
  const db: Db = createRecording(out, { overwrite: true });
  try {
    db.pragma('foreign_keys = OFF');
    db.pragma('journal_mode = OFF');
    db.pragma('synchronous = OFF');
    db.pragma('cache_size = -262144');
    beginBulkLoad(db);
    const tables = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").pluck().all() as string[];
    db.prepare('ATTACH DATABASE ? AS src').run(merged);
    db.exec('BEGIN');
    for (const t of tables) {
      db.exec(`DELETE FROM main.${t}`);
      db.exec(`INSERT INTO main.${t} SELECT * FROM src.${t}`);
    }
    db.exec('COMMIT');
    db.exec('DETACH DATABASE src');
  } finally {
    db.close();
  }
  syncFile(out);
  return (performance.now() - t0) / 1000;
}

/** The bytes alone: the merged file copied by the kernel (no SQLite), and synced. */
function byteFloor(merged: string, out: string): number {
  const t0 = performance.now();
  fs.copyFileSync(merged, out);
  syncFile(out);
  return (performance.now() - t0) / 1000;
}

function syncFile(file: string): void {
  const fd = fs.openSync(file, 'r+');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Reads the files through (into the page cache), as they are right after recording: every contender starts from the same cache. */
function readThrough(files: string[]): void {
  const buf = Buffer.alloc(16 * 2 ** 20);
  for (const f of files) {
    const fd = fs.openSync(f, 'r');
    try {
      while (fs.readSync(fd, buf, 0, buf.length, null) > 0);
    } finally {
      fs.closeSync(fd);
    }
  }
}

/** CPU seconds of the calling thread (Linux: /proc/thread-self/stat), user + system; null elsewhere. */
function threadCpuSeconds(): number | null {
  try {
    const stat = fs.readFileSync('/proc/thread-self/stat', 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return null;
  }
}

/** CPU seconds the whole machine spent busy so far (Linux: /proc/stat), null elsewhere: what others ran beside a measurement. */
function machineBusySeconds(): number | null {
  try {
    const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    return (f[0]! + f[1]! + f[2]! + f[5]! + f[6]! + f[7]!) / 100;
  } catch {
    return null;
  }
}

interface Measured {
  seconds: number;
  /** This process's CPU seconds, all threads. */
  cpu: number;
  /** The calling thread's. */
  mainCpu: number | null;
  /** CPU seconds of everything else on the machine meanwhile (other users' work, the kernel's writeback). */
  othersCpu: number | null;
}

function measured(run: () => void): Measured {
  const cpu0 = process.cpuUsage();
  const main0 = threadCpuSeconds();
  const busy0 = machineBusySeconds();
  const t0 = performance.now();
  run();
  const seconds = (performance.now() - t0) / 1000;
  const u = process.cpuUsage(cpu0);
  const cpu = (u.user + u.system) / 1e6;
  const main1 = threadCpuSeconds();
  const busy1 = machineBusySeconds();
  return {
    seconds,
    cpu,
    mainCpu: main0 !== null && main1 !== null ? main1 - main0 : null,
    othersCpu: busy0 !== null && busy1 !== null ? Math.max(0, busy1 - busy0 - cpu) : null,
  };
}

/**
 * merge: a generated job of N ranks (bench/generate-ranks.ts: one host and
 * GPU per rank, the same pid everywhere, each host's clock off by up to
 * ± 5 ms, kernel names interned in another order per rank) merged by
 * `streamscope merge`'s library call — the big tables written as pages on
 * all cores as it runs by default, and all in SQL on one thread (`pages:
 * false`, the merge when an input cannot go as pages) — beside three
 * floors, all in each round, on the same files, each started from the same
 * page cache (the inputs read through, everything synced): SQLite copying
 * the same rows into one file (copyFloor: what SQL on one thread cannot go
 * below), SQLite's transfer copy of the merged rows (transferFloor: SQLite
 * moving finished records, nothing decoded) and the merged file's bytes
 * copied (byteFloor: what no merge that writes the file goes below). Also
 * checks that merge found each host's clock offset (the ranks'
 * collectives end at the same true time), then measures the cross-rank
 * analysis of the merged job (benchJobAnalysis). Target: < 30 s for 64
 * ranks × 1 M operations.
 */
async function benchMerge(): Promise<void> {
  const ranks = Number(values['merge-ranks']);
  const ops = Number(values['merge-ops']);
  const rounds = Number(values['merge-rounds']);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-bench-merge-'));
  try {
    const tg = performance.now();
    const generated = generateRanks(path.join(dir, 'ranks'), ranks, ops, 8);
    const files = generated.map((g) => g.file);
    const inputBytes = files.reduce((s, f) => s + fs.statSync(f).size, 0);
    const generateSeconds = (performance.now() - tg) / 1000;
    const out = path.join(dir, 'job.sqlite');
    const copied = path.join(dir, 'copy.sqlite');
    const kinds = ['merge', 'sql', 'copyFloor', 'transferFloor', 'byteFloor'] as const;
    const runs = Object.fromEntries(kinds.map((k) => [k, [] as Measured[]])) as Record<(typeof kinds)[number], Measured[]>;
    let rows = 0;
    let outputBytes = 0;
    let worstClockError = 0;
    let asPages = 0;
    const fresh = () => {
      for (const f of [out, copied]) fs.rmSync(f, { force: true });
      execFileSync('sync');
      readThrough(files);
    };
    for (let round = 0; round < rounds; round++) {
      fresh();
      runs.copyFloor.push(measured(() => (rows = copyFloor(files, out).rows)));
      fresh();
      runs.sql.push(measured(() => mergeRecordings(files, out, { overwrite: true, pages: false })));
      fresh();
      runs.merge.push(
        measured(() => {
          const r = mergeRecordings(files, out, { overwrite: true });
          asPages += r.bigTables === 'pages' ? 1 : 0;
          worstClockError = Math.max(...r.sources.map((s, i) => Math.abs(s.correctionNs + generated[i]!.clockOffsetNs)));
        }),
      );
      outputBytes = fs.statSync(out).size;
      execFileSync('sync');
      runs.transferFloor.push(measured(() => transferFloor(out, copied)));
      fs.rmSync(copied);
      execFileSync('sync');
      runs.byteFloor.push(measured(() => byteFloor(out, copied)));
      fs.rmSync(copied);
    }
    const med = (k: (typeof kinds)[number], f: (m: Measured) => number | null = (m) => m.seconds) => median(runs[k].map((m) => f(m) ?? NaN));
    const m = med('merge');
    results.merge = {
      ranks,
      operationsPerRank: ops,
      streams: 8,
      rows,
      inputBytes,
      outputBytes,
      generateSeconds,
      roundsWrittenAsPages: asPages,
      runs,
      medianSeconds: Object.fromEntries(kinds.map((k) => [k, med(k)])),
      ratioToCopyFloor: m / med('copyFloor'),
      ratioToTransferFloor: m / med('transferFloor'),
      sqlOverPages: med('sql') / m,
      worstClockErrorNs: worstClockError,
      target: 30,
    };
    const fmt = (k: (typeof kinds)[number]) =>
      `${runs[k].map((r) => r.seconds.toFixed(1)).join(', ')} s (CPU ${runs[k].map((r) => r.cpu.toFixed(1)).join(', ')}; others ${runs[k].map((r) => r.othersCpu?.toFixed(1) ?? '?').join(', ')})`;
    lines.push(
      `merge     ${ranks} ranks × 8 streams, ${ops.toLocaleString('en-US')} operations each (${rows.toLocaleString('en-US')} rows, ${(inputBytes / 2 ** 30).toFixed(1)} GiB → ${(outputBytes / 2 ** 30).toFixed(1)} GiB; generated in ${generateSeconds.toFixed(0)} s); inputs read through before each run`,
    );
    lines.push(`          streamscope merge (pages)       ${fmt('merge')}`);
    lines.push(
      `            its thread ${runs.merge.map((r) => r.mainCpu?.toFixed(1) ?? '?').join(', ')} CPU s, the page writer's others ${runs.merge.map((r) => (r.mainCpu === null ? '?' : (r.cpu - r.mainCpu).toFixed(1))).join(', ')} (big tables as pages in ${asPages} of ${rounds} rounds)`,
    );
    lines.push(`          all in SQL (pages: false)       ${fmt('sql')}`);
    lines.push(`          floor: SQLite copying the rows  ${fmt('copyFloor')}`);
    lines.push(`          floor: transfer copy of merged  ${fmt('transferFloor')}`);
    lines.push(`          floor: the merged file's bytes  ${fmt('byteFloor')}`);
    lines.push(
      `          median ${m.toFixed(1)} s = ${(m / 30).toFixed(2)} × the 30 s target (${m < 30 ? 'met' : 'not met'}), ${(rows / m / 1e6).toFixed(2)} M rows/s; ${(med('sql') / m).toFixed(2)} × faster than all in SQL; ${(m / med('copyFloor')).toFixed(2)} × the row-copy floor, ${(m / med('transferFloor')).toFixed(2)} × the transfer floor, ${(m / med('byteFloor')).toFixed(1)} × the byte floor`,
    );
    lines.push(`          each rank's clock offset found to within ${worstClockError} ns`);
    if (values['merge-analysis'] !== 'none') await benchJobAnalysis(files, out, dir);
    // The job in the timeline: more than 8 ranks open folded (bench/job-open.ts).
    const open = await benchJobOpen(out);
    const openMedian = median(open.seconds);
    results.jobOpen = { ...open, medianSeconds: openMedian, target: 2 };
    lines.push(
      `job open  in Chromium, ranks folded: first frame with data ${open.seconds.map((x) => x.toFixed(2)).join(', ')} s; median ${openMedian.toFixed(2)} s = ${(openMedian / 2).toFixed(2)} × the 2 s target (${openMedian < 2 ? 'met' : 'not met'})`,
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** What `streamscope report` does with a job, timed: open, analyse (the diagnosis, its cross-rank rules included), the communication breakdown and the stragglers, the report built. */
function jobReport(file: string): {
  open: number;
  analyze: number;
  timings: AnalysisTimings;
  communication: number;
  stragglers: number;
  report: number;
  total: number;
  ranks: number;
  rssGiB: number;
} {
  const t0 = performance.now();
  const db = openRecording(file, { readonly: true });
  try {
    const processes = readProcesses(db);
    const open = (performance.now() - t0) / 1000;
    const timings = { load: 0, scope: 0, trace: 0, host: 0, diagnose: 0 };
    let t = performance.now();
    const a = analyze(db, { timings });
    void a.diagnosis; // diagnosed when first read (analyze.ts): timed here, as before
    const analyzeSeconds = (performance.now() - t) / 1000;
    t = performance.now();
    const c = a.communication;
    const communication = (performance.now() - t) / 1000;
    t = performance.now();
    void a.stragglers;
    const stragglers = (performance.now() - t) / 1000;
    t = performance.now();
    buildReport(file, a, processes);
    const report = (performance.now() - t) / 1000;
    return {
      open,
      analyze: analyzeSeconds,
      timings,
      communication,
      stragglers,
      report,
      total: (performance.now() - t0) / 1000,
      ranks: c?.ranks.length ?? 0,
      rssGiB: process.memoryUsage().rss / 2 ** 30,
    };
  } finally {
    db.close();
  }
}

/**
 * The cross-rank analysis of the merged job (issue 13: < 10 s for 64
 * ranks): opening it, and what `streamscope report` runs — the diagnosis
 * (its cross-rank rules: serialized collectives, straggler rank), the
 * communication breakdown per rank, the stragglers. For the whole job only
 * with --merge-analysis whole (minutes and ~12 GB here: the analysis loads
 * every operation and call); always for a sample of ranks (every
 * N/--merge-sample-th, merged as a user merges the ranks a question needs,
 * then reported), and for one rank's recording alone (what each of many
 * machines would do, a rank each).
 */
async function benchJobAnalysis(files: string[], job: string, dir: string): Promise<void> {
  const sampleSize = Math.min(files.length, Number(values['merge-sample']));
  const sample = Array.from({ length: sampleSize }, (_, i) => files[Math.floor((i * files.length) / sampleSize)]!);
  const sampled = path.join(dir, 'sample.sqlite');
  const t = performance.now();
  const db = openRecording(job, { readonly: true });
  const ranksShown = readProcesses(db).length;
  db.close();
  const openJob = (performance.now() - t) / 1000;
  readThrough(sample);
  const sampleMerge = measured(() => mergeRecordings(sample, sampled, { overwrite: true }));
  const sampleReport = jobReport(sampled);
  readThrough([files[0]!]);
  const oneRank = jobReport(files[0]!);
  const whole = values['merge-analysis'] === 'whole' ? jobReport(job) : null;
  results.jobAnalysis = { ranks: files.length, openJobSeconds: openJob, sampleRanks: sampleSize, sampleMerge, sampleReport, oneRank, whole, target: 10 };
  const phases = (r: ReturnType<typeof jobReport>) =>
    `open ${r.open.toFixed(2)}, analyse ${r.analyze.toFixed(1)} (load ${(r.timings.load / 1000).toFixed(1)}, host ${(r.timings.host / 1000).toFixed(1)}, diagnose ${(r.timings.diagnose / 1000).toFixed(1)}), communication ${r.communication.toFixed(1)}, stragglers ${r.stragglers.toFixed(2)}, report ${r.report.toFixed(2)}; ${r.rssGiB.toFixed(1)} GiB resident`;
  lines.push(`job       the merged ${files.length}-rank job opened (${ranksShown} processes listed) in ${openJob.toFixed(2)} s`);
  lines.push(
    whole
      ? `          its cross-rank analysis (streamscope report): ${whole.total.toFixed(1)} s = ${(whole.total / 10).toFixed(1)} × the 10 s target; ${phases(whole)}`
      : '          its cross-rank analysis as a whole: not run (--merge-analysis whole: minutes and ~12 GB on this machine)',
  );
  lines.push(
    `          a sample of ${sampleSize} ranks: merged in ${sampleMerge.seconds.toFixed(1)} s, reported in ${sampleReport.total.toFixed(1)} s (${sampleReport.total < 10 ? 'within' : 'over'} the 10 s target); ${phases(sampleReport)}`,
  );
  lines.push(`          one rank's recording alone: reported in ${oneRank.total.toFixed(1)} s; ${phases(oneRank)}`);
  await benchJobRankByRank(job, whole);
}

interface RankByRankRun {
  seconds: number;
  cpu: number;
  maxRssGiB: number;
  /** What the rest of the machine ran meanwhile (other sessions' work), CPU seconds. */
  othersCpu: number | null;
  workers: number;
  timings: { plan: number; scope: number; parts: number; load: number; analyse: number; combine: number };
}

/**
 * job: the cross-rank analysis of a merged job read rank by rank
 * (profiler/analysis/diagnosis/job.ts), what `streamscope report` runs on more than 8
 * ranks, each run in a process of its own (bench/job-analysis.ts: its
 * memory its own), the file read through first: on two worker threads (the
 * default on two cores) and on one thread with the loader on both cores,
 * --job-rounds each, alternated. Printed against the 10 s target and beside
 * the whole analyze() of the same file (`whole`: jobReport's, with
 * --merge-analysis whole; else not run).
 */
async function benchJobRankByRank(job: string, wholeOrLater: ReturnType<typeof jobReport> | (() => ReturnType<typeof jobReport>) | null): Promise<void> {
  const rounds = Number(values['job-rounds']);
  const modes = [
    { workers: null, label: 'worker threads (default)' },
    { workers: 0, label: 'one thread, the loader on every core' },
  ] as const;
  const runs = new Map<string, RankByRankRun[]>(modes.map((m) => [m.label, []]));
  for (let round = 0; round < rounds; round++) {
    for (const mode of modes) {
      readThrough([job]);
      const busy0 = machineBusySeconds();
      const r = spawnSync(
        process.execPath,
        [path.join(repoRoot, 'bench/job-analysis.ts'), job, ...(mode.workers === null ? [] : ['--workers', String(mode.workers)])],
        {
          encoding: 'utf8',
        },
      );
      const busy1 = machineBusySeconds();
      if (r.status !== 0) throw new Error(`bench/job-analysis.ts failed: ${r.stderr}`);
      const run = JSON.parse(r.stdout) as Omit<RankByRankRun, 'othersCpu'>;
      runs.get(mode.label)!.push({ ...run, othersCpu: busy0 !== null && busy1 !== null ? Math.max(0, busy1 - busy0 - run.cpu) : null });
    }
  }
  const byMode = modes.map((m) => {
    const rs = runs.get(m.label)!;
    const quietest = [...rs].sort((a, b) => (a.othersCpu ?? 0) - (b.othersCpu ?? 0))[0]!;
    return {
      mode: m.label,
      runs: rs,
      medianSeconds: median(rs.map((x) => x.seconds)),
      quietestSeconds: quietest.seconds,
      quietestOthersCpu: quietest.othersCpu,
    };
  });
  // The whole analysis after the runs where asked (its 12 GiB would take the page cache the runs read from).
  const whole = typeof wholeOrLater === 'function' ? (readThrough([job]), wholeOrLater()) : wholeOrLater;
  const best = byMode[0]!.medianSeconds;
  results.jobRankByRank = { file: job, rounds, modes: byMode, wholeSeconds: whole?.total ?? null, wholeRssGiB: whole?.rssGiB ?? null, target: 10 };
  lines.push(
    `job       the merged job's cross-rank analysis read rank by rank (streamscope report, ${job}), each run in a process of its own, the file read through first:`,
  );
  for (const m of byMode) {
    const r0 = m.runs[0]!;
    lines.push(
      `          ${m.mode.padEnd(38)} ${m.runs.map((x) => x.seconds.toFixed(1)).join(', ')} s (CPU ${m.runs.map((x) => x.cpu.toFixed(1)).join(', ')}; others ${m.runs.map((x) => x.othersCpu?.toFixed(1) ?? '?').join(', ')}; peak ${Math.max(...m.runs.map((x) => x.maxRssGiB)).toFixed(2)} GiB); median ${m.medianSeconds.toFixed(1)} s, quietest ${m.quietestSeconds.toFixed(1)} s`,
    );
    lines.push(
      `            phases of the first: plan ${(r0.timings.plan / 1000).toFixed(2)}, start-up from the zones ${(r0.timings.scope / 1000).toFixed(2)}, parts ${(r0.timings.parts / 1000).toFixed(1)} (their loads ${(r0.timings.load / 1000).toFixed(1)} and analyses ${(r0.timings.analyse / 1000).toFixed(1)} CPU-side s, summed over ${r0.workers || 1} thread${r0.workers > 1 ? 's' : ''}), combination ${(r0.timings.combine / 1000).toFixed(2)} s`,
    );
  }
  lines.push(
    `          median ${best.toFixed(1)} s = ${(best / 10).toFixed(2)} × the 10 s target (${best < 10 ? 'met' : 'not met'})` +
      (whole
        ? `; the whole analyze() of the same job ${whole.total.toFixed(1)} s and ${whole.rssGiB.toFixed(1)} GiB: ${(whole.total / best).toFixed(1)} × as long`
        : '; the whole analyze() of it: not run (--merge-analysis whole: minutes and ~12 GB on this machine)'),
  );
}

// startup (issue 30): bench/startup.ts. First: short, and the measure most sensitive to what else runs.
if (values.only === undefined || values.only === 'startup') {
  const { benchStartup } = await import('./startup.ts');
  const r = benchStartup(Number(values['startup-rounds']));
  results.startup = r.result;
  lines.push(...r.lines);
}
if (values.only === undefined || values.only === 'ingest') await benchIngest();
if (values.only === undefined || values.only === 'renderer') await benchRenderer();
if (values.only === undefined || values.only === 'selection') await benchSelection();
if (values.only === undefined || values.only === 'analysis') await benchAnalysis();
if (values.only === undefined || values.only === 'import') await benchImport();
if (values.only === undefined || values.only === 'merge') await benchMerge();
// A merged job given: its analysis rank by rank (and whole, with --merge-analysis whole).
if (values.only === 'job') {
  if (!values.job) throw new Error('--only job needs --job FILE (a merged job)');
  const job = values.job;
  await benchJobRankByRank(job, values['merge-analysis'] === 'whole' ? () => jobReport(job) : null);
}
// live (issue 14): bench/live-view.ts.
if (values.only === undefined || values.only === 'live') {
  const { benchLive } = await import('./live-view.ts');
  const live = await benchLive({ launches: Number(values['live-launches']), speed: Number(values['live-speed']) });
  results.live = live.result;
  lines.push(...live.lines);
}
// serve-load (issue 15): bench/serve-load.ts.
if (values.only === undefined || values.only === 'serve-load') {
  const { benchServeLoad } = await import('./serve-load.ts');
  const serve = await benchServeLoad({
    ops: Number(values['serve-ops']),
    clients: Number(values['serve-clients']),
    seconds: Number(values['serve-seconds']),
    abortSeconds: 20,
  });
  results.serveLoad = serve.result;
  lines.push(...serve.lines);
}
// job-summaries (issue 29): bench/job-summaries.ts.
if (values.only === undefined || values.only === 'job-summaries') {
  const { benchJobSummaries } = await import('./job-summaries.ts');
  const r = benchJobSummaries({
    ranks: Number(values['summary-ranks']),
    ops: Number(values['summary-ops']),
    workers: 2,
    cold: values['summary-cold'] ?? false,
    rounds: Number(values['summary-rounds']),
  });
  results.jobSummaries = r.result;
  lines.push(...r.lines);
}
// hta (issue 29): HTA beside StreamScope on the same Kineto job, bench/hta.ts.
if (values.only === undefined || values.only === 'hta') {
  const { benchHta } = await import('./hta.ts');
  const r = await benchHta({
    ranks: (values['hta-ranks'] ?? '8,64').split(',').map(Number),
    mb: Number(values['hta-mb'] ?? '0'),
    hta: values.hta,
    python: values['hta-python'],
    rounds: Number(values['hta-rounds'] ?? '3'),
  });
  results.hta = r.result;
  lines.push(...r.lines);
}
// import-many (issue 29): bench/import-many.ts.
// page (issue 30): bench/page-findings.ts.
if (values.only === undefined || values.only === 'page') {
  const { benchPageFindings } = await import('./page-findings.ts');
  const r = await benchPageFindings(Number(values['page-launches']), Number(values['page-runs']));
  results.page = r.result;
  lines.push(...r.lines);
}
if (values.only === undefined || values.only === 'import-many') {
  const { benchImportMany } = await import('./import-many.ts');
  const r = benchImportMany({ ranks: Number(values['import-many-ranks']), rounds: Number(values['import-many-rounds']) });
  results.importMany = r.result;
  lines.push(...r.lines);
}
// job-view (issue 29): the timeline's job view from the ranks' summaries (bench/job-open.ts), on job-summaries' ranks.
if (values.only === 'job-view' || (values.only === undefined && results.jobSummaries)) {
  const { benchJobViewOfSummaries, jobViewLines, rankFiles } = await import('./job-open.ts');
  const dir = path.join(os.tmpdir(), `streamscope-bench-job-${values['summary-ranks']}x${values['summary-ops']}`);
  if (!fs.existsSync(path.join(dir, 'done'))) lines.push(`job view: no generated ranks in ${dir}: run --only job-summaries first`);
  else {
    const r = await benchJobViewOfSummaries(rankFiles(dir), 3);
    results.jobView = r;
    lines.push(...jobViewLines(r));
  }
}
// serve-flood (issue 27): bench/serve-flood.ts.
if (values.only === undefined || values.only === 'serve-flood') {
  const { benchServeFlood } = await import('./serve-flood.ts');
  const flood = await benchServeFlood({
    ops: Number(values['flood-ops']),
    halfOpen: Number(values['flood-half-open']),
    parallel: Number(values['flood-parallel']),
    seconds: Number(values['flood-seconds']),
  });
  results.serveFlood = flood.result;
  lines.push(...flood.lines);
}
if (values.only === undefined || values.only === 'responsiveness') {
  const { benchResponsiveness } = await import('./responsiveness.ts');
  const r = await benchResponsiveness(Number(values['responsiveness-rounds']));
  results.responsiveness = r.result;
  lines.push(...r.lines);
}
if (values.only === undefined || values.only === 'whatif') {
  const { benchWhatif } = await import('./whatif.ts');
  const r = benchWhatif(Number(values['whatif-rounds']), values['whatif-against']);
  results.whatif = r.result;
  lines.push(...r.lines);
}
if (values.only === undefined || values.only === 'corpus') {
  const { corpusPairs, corpusTable, evaluatePair } = await import('../test/helpers/corpus.ts');
  const t = performance.now();
  const rows = corpusPairs().map(evaluatePair);
  results.corpus = {
    pairs: rows.map((r) => ({
      pair: r.pair,
      round: r.round,
      expectedFix: r.expectedFix,
      top: r.top ? { kind: r.top.kind, fixId: r.top.fixId ?? null, costNs: r.top.costNs } : null,
      secondMistake: r.secondMistake,
      predictedNs: r.predictedNs,
      bugSpanNs: r.bugSpanNs,
      fixSpanNs: r.fixSpanNs,
      error: r.error,
      bugWallNs: r.bugWallNs,
      fixWallNs: r.fixWallNs,
    })),
  };
  lines.push(
    `corpus  the diagnosis of each pair's mistake against its fix, both recorded on an H200, each round (test/fixtures/corpus; analysed here in ${((performance.now() - t) / 1000).toFixed(1)} s)`,
  );
  lines.push(...corpusTable(rows).map((l) => `        ${l}`));
}
if (values.only === undefined || values.only === 'overhead') {
  const inv = devices();
  if (inv.devices.length === 0) lines.push(`overhead  skipped: no GPU here (${inv.error})`);
  else benchOverhead();
}
if (values.only === undefined || values.only === 'record-wall') {
  const inv = devices();
  if (inv.devices.length === 0) lines.push(`record-wall  skipped: no GPU here (${inv.error})`);
  else {
    const { benchRecordWall } = await import('./record-wall.ts');
    // A runner job and a Numba script of a few seconds each: short programs, where what record adds shows most.
    const wall = await benchRecordWall(
      [
        { name: 'runner', argv: [runnerPath(), '--workload', 'normalise', '--scenario', 'concurrent', '--iterations', '40'] },
        { name: 'numba', argv: ['python3', path.join(repoRoot, 'test/gpu/scripts/numba_streams.py'), '--arrays', '8', '--cols', '20000'] },
      ],
      Number(values['wall-rounds']),
    );
    results.recordWall = wall.result;
    lines.push(...wall.lines);
  }
}
process.stdout.write(lines.join('\n') + '\n');
if (values.json) fs.writeFileSync(values.json, JSON.stringify(results, null, 2) + '\n');
