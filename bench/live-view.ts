// `npm run bench -- --only live`: the live timeline (issue 14) while a long
// run is recorded. A synthetic stream of a 10-minute run of 1 M GPU
// operations per minute (10 M kernel launches 60 µs apart on 4 streams,
// each with its launch call, a copy every 64 launches: 20 M rows) is
// replayed `speed` times faster than it ran — appended to a stream
// directory every 500 ms (the collector's flush) in pieces of 500 ms × speed
// of the run — and ingested by the recorder's own ingest in a process of its
// own (test/helpers/live-feed.ts), while the page in Chromium follows the
// recording from its first piece to its last, served by browser mode from
// this process (its analyses of the growing file in the analysis process).
//
// Replayed faster, not at rate (`--live-speed`, default 4: 2.5 minutes):
// the recording at the end is that of a 10-minute run, and the ingest, the
// server and the page — on the same cores as Chromium — handle four times
// the data per second a real run makes, so the figures bound what the real
// rate costs. At 10× the two cores of the development machine are short
// (bench/RESULTS.md, "Live timeline").
//
// Measured: the page's main-thread work per frame over the whole replay
// (a Chromium trace, bench/frame-trace.ts; wall time and the thread's CPU
// time), its JS heap every 5 s (bounded: it holds windows of the view, not
// the recording), this process's (server's) resident memory, and how far
// the page's view trailed the data the feed had written (in the run's time
// and in wall time).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { syntheticStreamToolPath } from '../profiler/native/paths.ts';
import { mainThreadWorkPerFrame } from './frame-trace.ts';
import { quantile } from './stats.ts';

export interface LiveBenchOptions {
  /** Kernel launches of the run (default 10 M: 10 minutes at 1 M a minute). */
  launches: number;
  /** How many times faster than it ran the stream is replayed. */
  speed: number;
}

/** ns between launches: 1 M a minute. */
const PERIOD_NS = 60_000;
const FLUSH_MS = 500;

/** Runs the live benchmark; returns its figures and the lines to print. */
export async function benchLive(opts: LiveBenchOptions): Promise<{ result: Record<string, unknown>; lines: string[] }> {
  const lines: string[] = [];
  const runNs = opts.launches * PERIOD_NS;
  const stream = path.join(os.tmpdir(), `streamscope-bench-live-${opts.launches}.ssr`);
  if (!fs.existsSync(stream)) {
    execFileSync(syntheticStreamToolPath(), ['--out', `${stream}.tmp`, '--bench-launches', String(opts.launches), '--bench-period-ns', String(PERIOD_NS)]);
    fs.renameSync(`${stream}.tmp`, stream);
  }
  const chunks = Math.max(2, Math.round(runNs / 1e6 / opts.speed / FLUSH_MS));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-bench-live-'));
  const file = path.join(dir, 'live.sqlite');
  // Loaded here: the GPU machine runs the other benchmarks without Playwright.
  const { launch, serve } = await import('../test/e2e/browser.ts');
  const { startLiveFeed } = await import('../test/helpers/live-feed.ts');
  const feed = await startLiveFeed({ stream, out: file, chunks, intervalMs: FLUSH_MS, startDelayMs: 4000 });
  const server = await serve([file]);
  const browser = await launch();
  const trace = path.join(os.tmpdir(), `streamscope-bench-live-trace-${process.pid}.json`);
  try {
    const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Performance.enable');
    await page.goto(server.url);
    await page.waitForSelector('[data-testid="live-badge"]', { timeout: 60_000 });
    const heap = async () =>
      ((await cdp.send('Performance.getMetrics')).metrics as { name: string; value: number }[]).find((m) => m.name === 'JSHeapUsedSize')!.value;
    await browser.startTracing(page, { path: trace, categories: ['toplevel', 'cc', 'benchmark'] });
    const t0 = performance.now();
    const heapMiB: number[] = [];
    const serverRssMiB: number[] = [];
    const lagRunMs: number[] = [];
    let finished = false;
    void feed.done.then(() => (finished = true));
    let nextHeap = 0;
    while (!finished) {
      await new Promise((r) => setTimeout(r, 1000));
      const elapsed = performance.now() - t0;
      // The data written so far ends about here in the run's time (pieces are equal slices of the stream).
      const writtenNs = (feed.chunks() / chunks) * runNs;
      const shownNs = await page.evaluate(() => Number(document.querySelector('[data-testid="live-badge"]')?.getAttribute('data-end-ns') ?? NaN));
      if (Number.isFinite(shownNs) && feed.chunks() > 2 && feed.chunks() < chunks) lagRunMs.push(Math.max(0, writtenNs - shownNs) / 1e6);
      serverRssMiB.push(process.memoryUsage().rss / 2 ** 20);
      if (elapsed >= nextHeap) {
        heapMiB.push((await heap()) / 2 ** 20);
        nextHeap += 5000;
      }
    }
    const done = await feed.done;
    await page.waitForSelector('[data-testid="live-badge"]', { state: 'detached', timeout: 120_000 });
    const wallS = (performance.now() - t0) / 1000;
    await browser.stopTracing();
    const { wallMs, cpuMs } = mainThreadWorkPerFrame(JSON.parse(fs.readFileSync(trace, 'utf8')));
    heapMiB.push((await heap()) / 2 ** 20);
    const result = {
      launches: opts.launches,
      operations: opts.launches + Math.floor(opts.launches / 64),
      runSeconds: runNs / 1e9,
      speed: opts.speed,
      chunks,
      replaySeconds: wallS,
      complete: done.complete,
      records: done.records,
      frames: wallMs.length,
      p50WorkMs: quantile(wallMs, 0.5),
      p95WorkMs: quantile(wallMs, 0.95),
      maxWorkMs: Math.max(...wallMs),
      p95CpuMs: quantile(cpuMs, 0.95),
      heapMiB,
      serverRssMiB: { first: serverRssMiB[0], max: Math.max(...serverRssMiB), last: serverRssMiB.at(-1) },
      lagRunMs: { p50: quantile(lagRunMs, 0.5), p95: quantile(lagRunMs, 0.95) },
      targets: { p95WorkMs: 16 },
    };
    lines.push(
      `live      a ${(runNs / 60e9).toFixed(0)}-minute run of ${(result.operations / 1e6).toFixed(1)} M GPU operations (1 M a minute) replayed at ${opts.speed}× in ${wallS.toFixed(0)} s (${chunks} pieces, 500 ms apart), the page following it: ` +
        `${done.complete ? 'complete' : 'INCOMPLETE'} at the end`,
    );
    lines.push(
      `          main-thread work per frame over ${wallMs.length} frames: p50 ${result.p50WorkMs.toFixed(1)} ms, p95 ${result.p95WorkMs.toFixed(1)} ms, max ${result.maxWorkMs.toFixed(0)} ms (target p95 ≤ 16 ms); on a CPU p95 ${result.p95CpuMs.toFixed(1)} ms`,
    );
    lines.push(
      `          JS heap every 5 s: ${heapMiB.map((h) => h.toFixed(0)).join(' ')} MiB (bounded: it follows the view, not the recording); server RSS ${result.serverRssMiB.first!.toFixed(0)} → max ${result.serverRssMiB.max.toFixed(0)} MiB`,
    );
    lines.push(
      `          the view's end behind the data written: p50 ${(result.lagRunMs.p50 / 1000).toFixed(2)} s, p95 ${(result.lagRunMs.p95 / 1000).toFixed(2)} s of the run (÷ ${opts.speed}: ${(result.lagRunMs.p95 / opts.speed / 1000).toFixed(2)} s of wall time at p95)`,
    );
    return { result, lines };
  } finally {
    feed.stop();
    fs.rmSync(trace, { force: true });
    await browser.close();
    await server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
