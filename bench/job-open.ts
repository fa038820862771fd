// Opening a merged job in the timeline (issue 13, part 5: a job of 64 ranks
// × 8 streams, 1 M operations per rank, "opens in < 2 s with ranks
// collapsed"): the file served by browser mode, Chromium loading the page,
// until the first frame drawn with data. A job of more than 8 ranks opens
// with every rank folded to one GPU-busy row (renderer/src/timeline/rows.ts),
// read from the zones: no stream row is fetched for the first frame.
//
//   node bench/job-open.ts JOB.sqlite [--runs 3]
// run-bench.ts calls benchJobOpen on the job its merge benchmark wrote.
import { parseArgs } from 'node:util';
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

if (import.meta.main) {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { runs: { type: 'string', default: '3' } } });
  const file = positionals[0];
  if (!file) {
    process.stderr.write('usage: node bench/job-open.ts JOB.sqlite [--runs 3]\n');
    process.exit(2);
  }
  const r = await benchJobOpen(file, Number(values.runs));
  const mid = median(r.seconds);
  console.log(
    `job open  ${file}: first frame with data ${r.seconds.map((s) => s.toFixed(2)).join(', ')} s; median ${mid.toFixed(2)} s = ${(mid / 2).toFixed(2)} × the 2 s target`,
  );
}
