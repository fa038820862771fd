// Opening a merged job in the timeline (issue 13, part 5: a job of 64 ranks
// × 8 streams, 1 M operations per rank, "opens in < 2 s with ranks
// collapsed"): the file served by browser mode, Chromium loading the page,
// until the first frame drawn with data. A job of more than 8 ranks opens
// with every rank folded to one GPU-busy row (renderer/src/timeline/rows.ts),
// read from the zones: no stream row is fetched for the first frame.
//
//   node bench/job-open.ts JOB.sqlite [--runs 3]
// run-bench.ts calls benchJobOpen on the job its merge benchmark wrote.
//
// And a job of rank files opened from their summaries, not merged (issue
// 29, query/job-query.ts): `streamscope serve --job --job-view summaries
// FILE…` in a process of its own (its peak resident memory from
// /proc/PID/status VmHWM, the query thread's included), from its start to
// the URL (every file's summary, small tables and zones read), Chromium
// from page load to the first frame with data (every rank folded), and one
// rank unfolded: from the click to its streams drawn from its own file.
//
//   node bench/job-open.ts --summaries DIR [--ranks 1024] [--runs 3]
// run-bench.ts runs it as `--only job-view` on job-summaries' generated ranks.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../profiler/native/paths.ts';
import { parseArgs } from 'node:util';
import { startCli } from './serve-cli.ts';
import { median } from './stats.ts';

export interface JobOpen {
  /** Page load to the first frame drawn with data, per run (s). */
  seconds: number[];
}

export async function benchJobOpen(file: string, runs = 3): Promise<JobOpen> {
  // Loaded here: the GPU machine runs the other benchmarks without Playwright.
  const { launch, serve } = await import('../test/e2e/browser.ts');
  const server = await serve([file]);
  const browser = await launch();
  const seconds: number[] = [];
  try {
    for (let r = 0; r < runs; r++) {
      const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
      const t0 = performance.now();
      await page.goto(server.url);
      await page.waitForFunction(() => (window.__streamscope?.dataFrames ?? 0) > 0, undefined, { timeout: 300_000 });
      seconds.push((performance.now() - t0) / 1000);
      await page.close();
    }
  } finally {
    await browser.close();
    await server.close();
  }
  return { seconds };
}

export interface JobViewOfSummaries {
  ranks: number;
  /** Per run: serve's start to its URL (the job read), page load to the first frame with data, the two together, one rank's detail (s). */
  serveSeconds: number[];
  firstFrameSeconds: number[];
  totalSeconds: number[];
  detailSeconds: number[];
  /** serve's peak resident memory per run (MiB, VmHWM: every thread of the process), when the rank's detail was drawn. */
  peakRssMiB: number[];
  /** Page load to the job's findings shown (the job report's, on the analysis thread: job-analysis.ts), and serve's peak memory then. */
  findingsSeconds: number[];
  peakRssWithFindingsMiB: number[];
}

/** Peak resident memory of a process (MiB) from /proc: VmHWM. */
function peakRssMiB(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** The rank files of `dir` (*.sqlite, by name), the first `ranks` of them. */
export function rankFiles(dir: string, ranks = Infinity): string[] {
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.sqlite'))
    .sort()
    .slice(0, ranks)
    .map((f) => path.join(dir, f));
}

/** `files` served as one job from their summaries, `runs` times (a serve each), as the header says. */
export async function benchJobViewOfSummaries(files: string[], runs = 3): Promise<JobViewOfSummaries> {
  const { launch } = await import('../test/e2e/browser.ts');
  // The CLI serves renderer/dist: the page of these sources.
  execFileSync(process.execPath, [path.join(repoRoot, 'node_modules/vite/bin/vite.js'), 'build', '--config', 'renderer/vite.config.ts', '--logLevel', 'warn'], {
    cwd: repoRoot,
    stdio: 'inherit',
  });
  const browser = await launch();
  const r: JobViewOfSummaries = {
    ranks: files.length,
    serveSeconds: [],
    firstFrameSeconds: [],
    totalSeconds: [],
    detailSeconds: [],
    peakRssMiB: [],
    findingsSeconds: [],
    peakRssWithFindingsMiB: [],
  };
  try {
    for (let run = 0; run < runs; run++) {
      const t0 = performance.now();
      const { child, url } = await startCli(files, ['--job', '--job-view', 'summaries']);
      const served = performance.now();
      try {
        const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
        await page.goto(url);
        await page.waitForFunction(() => (window.__streamscope?.dataFrames ?? 0) > 0, undefined, { timeout: 300_000 });
        const framed = performance.now();
        // The first rank's detail: unfolded, its streams read from its own file (no stream row was shown before).
        const fold = page.locator('[data-testid^="fold-proc:"]').first();
        const group = (await fold.getAttribute('data-testid'))!.slice('fold-'.length);
        const before = await page.evaluate(() => window.__streamscope!.dataFrames);
        const t1 = performance.now();
        // A click on the button itself (the overview strip above the rows may cover the first label).
        await fold.evaluate((b: HTMLElement) => b.click());
        await page.waitForSelector('[data-testid^="row-stream:"]', { timeout: 60_000 });
        // Its rows drawn with their data (the event waits' hatching, asked of the analysis side behind the job's findings, may come later).
        await page.waitForFunction((n) => window.__streamscope!.dataFrames > n && window.__streamscope!.windowsIdle(), before, { timeout: 60_000 });
        r.detailSeconds.push((performance.now() - t1) / 1000);
        if (run === 0) process.stderr.write(`job view: unfolded ${group}\n`);
        r.serveSeconds.push((served - t0) / 1000);
        r.firstFrameSeconds.push((framed - served) / 1000);
        r.totalSeconds.push((framed - t0) / 1000);
        r.peakRssMiB.push(peakRssMiB(child.pid!));
        // The findings panel's answer (its scope's label, no progress line left), or its error.
        await page.waitForFunction(
          () =>
            document.querySelector('[data-testid="scope-error"]') !== null ||
            (document.querySelector('[data-testid="scope-label"]') !== null && document.querySelector('[data-testid="findings-progress"]') === null),
          undefined,
          { timeout: 120_000 },
        );
        if (await page.locator('[data-testid="scope-error"]').count())
          throw new Error(`findings: ${await page.locator('[data-testid="scope-error"]').textContent()}`);
        r.findingsSeconds.push((performance.now() - served) / 1000);
        r.peakRssWithFindingsMiB.push(peakRssMiB(child.pid!));
        await page.close();
      } finally {
        child.kill('SIGTERM');
        await new Promise((resolve) => child.once('exit', resolve));
      }
    }
  } finally {
    await browser.close();
  }
  return r;
}

/** The lines run-bench and the command print. */
export function jobViewLines(r: JobViewOfSummaries): string[] {
  const f = (xs: number[]) => `${xs.map((x) => x.toFixed(2)).join(', ')}; median ${median(xs).toFixed(2)}`;
  return [
    `job view from summaries, ${r.ranks.toLocaleString('en-US')} ranks: serve start to URL ${f(r.serveSeconds)} s; page load to first frame with data ${f(r.firstFrameSeconds)} s`,
    `  serve start to first frame ${f(r.totalSeconds)} s (target <= 10 s); serve's peak RSS ${r.peakRssMiB.map((x) => x.toFixed(0)).join(', ')} MiB (target <= 2048)`,
    `  one rank's detail (unfolded: its streams from its own file) ${f(r.detailSeconds)} s (target <= 2 s)`,
    `  page load to the job's findings shown ${f(r.findingsSeconds)} s; serve's peak RSS then ${r.peakRssWithFindingsMiB.map((x) => x.toFixed(0)).join(', ')} MiB`,
  ];
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { runs: { type: 'string', default: '3' }, summaries: { type: 'string' }, ranks: { type: 'string' }, json: { type: 'string' } },
  });
  if (values.summaries) {
    const r = await benchJobViewOfSummaries(rankFiles(values.summaries, values.ranks ? Number(values.ranks) : Infinity), Number(values.runs));
    for (const line of jobViewLines(r)) console.log(line);
    if (values.json) fs.writeFileSync(values.json, JSON.stringify(r, null, 2) + '\n');
    process.exit(0);
  }
  const file = positionals[0];
  if (!file) {
    process.stderr.write('usage: node bench/job-open.ts JOB.sqlite [--runs 3] | --summaries DIR [--ranks N] [--runs 3] [--json FILE]\n');
    process.exit(2);
  }
  const r = await benchJobOpen(file, Number(values.runs));
  const mid = median(r.seconds);
  console.log(
    `job open  ${file}: first frame with data ${r.seconds.map((s) => s.toFixed(2)).join(', ')} s; median ${mid.toFixed(2)} s = ${(mid / 2).toFixed(2)} × the 2 s target`,
  );
}
