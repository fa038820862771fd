// `npm run bench -- --only responsiveness`: the timing properties that
// `npm test` used to assert and that depend on how fast (and how loaded) the
// machine is — on the 2-core development VM they failed about one run in two
// beside other test files (issue 16). The tests keep what is functional (the
// answers, the frames found, CPU ≤ wall); the times are measured here, each
// `rounds` times, and printed against the bound the test had.
//
//  query worker   how busy the main thread's event loop is while the query
//                 worker answers 40 window queries (was < 0.5 in
//                 test/app/query-worker.test.ts)
//  frame trace    the frame-trace check's figures on a page of 10 idle, 10
//                 busy (30 ms loop) and 5 idle frames (bounds of
//                 test/e2e/frame-trace.test.ts)
//  launch         launchElectron returning false where it cannot start
//                 (was < 2 s, test/app/launch.test.ts)
//  record jobs    without a GPU: a job failing with the no-driver message,
//                 the start timeout (300 ms) stopping a hung recorder,
//                 probeGpu (were < 10 s, < 5 s, < 10 s,
//                 test/app/record-jobs.test.ts)
//  replay         the replay of 10 M operations on 64 streams: host model
//                 and replay together against the issue-16 goal (≤ 4 s;
//                 test/analysis/replay.test.ts asserted < 40 s). `--only
//                 whatif` (bench/whatif.ts) measures it alone, beside its anchor
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { QueryClient } from '../profiler/query/query-client.ts';
import { launchElectron } from '../profiler/cli/desktop-app.ts';
import { probeGpu, RecordJobs, type CliInvocation } from '../app/record-jobs.ts';
import { replay } from '../profiler/analysis/replay/replay.ts';
import { hostModel } from '../profiler/analysis/replay/replay-host.ts';
import { devices } from '../profiler/native/addon.ts';
import { repoRoot } from '../profiler/native/paths.ts';
import { syntheticReplay } from '../test/helpers/synthetic-replay.ts';
import { frameWorkPage, mainThreadWorkPerFrame } from './frame-trace.ts';
import { WHATIF_GOAL_SECONDS } from './whatif.ts';
import { median } from './stats.ts';

const fixture = (name: string) => path.join(repoRoot, `test/fixtures/recordings/${name}.sqlite`);
const fmt = (xs: number[], digits: number) => xs.map((x) => x.toFixed(digits)).join(', ');

/** Main-thread event-loop utilization while the worker answers 40 window queries (torch_streams, 2000 px). */
async function queryWorkerUtilization(): Promise<number> {
  const q = new QueryClient({ workerPath: new URL('../profiler/query/query-worker.ts', import.meta.url) });
  try {
    const h = await q.openRecording(fixture('torch_streams'));
    const s = await q.summary(h.recordingId);
    const rows = [...s.streams.map((st) => st.rowId), ...s.processes.flatMap((p) => p.threads.flatMap((t) => [t.apiRowId, t.nvtxRowId]))];
    const req = { rows, startNs: s.startNs, endNs: s.endNs, resolutionNs: (s.endNs - s.startNs) / 2000 };
    await q.window(h.recordingId, req); // warm: the worker's first answer compiles its code
    // Busy time, not wall time: near 1 had the queries run on this thread,
    // about 0.15 when the worker answers and this thread passes messages.
    const before = performance.eventLoopUtilization();
    await Promise.all(Array.from({ length: 40 }, () => q.window(h.recordingId, req)));
    return performance.eventLoopUtilization(before).utilization;
  } finally {
    await q.terminate();
  }
}

interface FrameFigures {
  frames: number;
  busyFrames: number; // wall ≥ 30 ms (bound: 9..12)
  idleFrames: number; // wall < 10 ms (bound: ≥ 8)
  cpuSumMs: number; // bound: < 10 × 30 + 4 per frame
  cpuBusyFrames: number; // CPU ≥ 10 ms (bound: ≥ 8)
  withinBounds: boolean;
}

async function frameTrace(): Promise<FrameFigures> {
  const { launch } = await import('../test/e2e/browser.ts');
  const browser = await launch();
  const trace = path.join(os.tmpdir(), `frame-trace-bench-${process.pid}.json`);
  try {
    const page = await browser.newPage();
    await page.setContent('<canvas id="c" width="200" height="100"></canvas>');
    await browser.startTracing(page, { path: trace, categories: ['toplevel', 'cc', 'benchmark'] });
    await page.evaluate(frameWorkPage);
    await browser.stopTracing();
    const { wallMs, cpuMs } = mainThreadWorkPerFrame(JSON.parse(fs.readFileSync(trace, 'utf8')));
    const f = {
      frames: wallMs.length,
      busyFrames: wallMs.filter((w) => w >= 30).length,
      idleFrames: wallMs.filter((w) => w < 10).length,
      cpuSumMs: cpuMs.reduce((a, b) => a + b, 0),
      cpuBusyFrames: cpuMs.filter((c) => c >= 10).length,
    };
    const withinBounds = f.busyFrames >= 9 && f.busyFrames <= 12 && f.idleFrames >= 8 && f.cpuSumMs < 10 * 30 + 4 * f.frames && f.cpuBusyFrames >= 8;
    return { ...f, withinBounds };
  } finally {
    fs.rmSync(trace, { force: true });
    await browser.close();
  }
}

async function seconds(run: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await run();
  return (performance.now() - t) / 1000;
}

export async function benchResponsiveness(rounds: number): Promise<{ result: Record<string, unknown>; lines: string[] }> {
  const lines: string[] = [];
  const result: Record<string, unknown> = { rounds, loadavg: os.loadavg() };
  const noGpu = devices().devices.length === 0;
  const cli: CliInvocation = { command: process.execPath, args: [path.join(repoRoot, 'profiler/cli/streamscope.ts')] };
  const noOpen = async (): Promise<never> => {
    throw new Error('nothing to open');
  };
  const util: number[] = [];
  const frames: FrameFigures[] = [];
  const launch: number[] = [];
  const noDriver: number[] = [];
  const startTimeout: number[] = [];
  const probe: number[] = [];
  const model: number[] = [];
  const replayS: number[] = [];
  // Each measure once per round, in turn, so that a slow spell of the machine spreads over all of them.
  for (let r = 0; r < rounds; r++) {
    util.push(await queryWorkerUtilization());
    frames.push(await frameTrace());
    launch.push(await seconds(() => launchElectron([path.join(os.tmpdir(), 'x.sqlite')], { log: () => {} })));
    if (noGpu) {
      const outputDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-resp-'));
      try {
        const jobs = new RecordJobs({ outputDir, cli, open: noOpen });
        noDriver.push(await seconds(() => jobs.settled(jobs.start({ workload: { name: 'normalise', scenario: 'concurrent' } }).jobId)));
        const hanging: CliInvocation = { command: process.execPath, args: ['-e', 'setTimeout(() => {}, 60_000)', '--'] };
        const hung = new RecordJobs({ outputDir, cli: hanging, open: noOpen, startTimeoutMs: 300, killGraceMs: 300 });
        startTimeout.push(await seconds(() => hung.settled(hung.start({ workload: { name: 'normalise', scenario: 'serial' } }).jobId)));
        probe.push(await seconds(() => probeGpu(cli)));
      } finally {
        fs.rmSync(outputDir, { recursive: true, force: true });
      }
    }
    const { trace, host } = syntheticReplay(10_000_000, 64, 1000);
    let t = performance.now();
    hostModel(trace, host);
    model.push((performance.now() - t) / 1000);
    t = performance.now();
    replay(trace, host);
    replayS.push((performance.now() - t) / 1000);
  }
  result.queryWorkerUtilization = { runs: util, median: median(util), max: Math.max(...util), bound: 0.5 };
  result.frameTrace = frames;
  result.launchElectronSeconds = { runs: launch, bound: 2 };
  if (noGpu) {
    result.recordJobs = {
      noDriverSeconds: { runs: noDriver, bound: 10 },
      startTimeoutSeconds: { runs: startTimeout, bound: 5 },
      probeGpuSeconds: { runs: probe, bound: 10 },
    };
  }
  const together = model.map((m, i) => m + replayS[i]!);
  result.replay10M = { hostModelSeconds: model, replaySeconds: replayS, totalSeconds: together, goalTotalSeconds: WHATIF_GOAL_SECONDS, testBoundSeconds: 40 };
  const within = (xs: number[], bound: number) => `${xs.filter((x) => x < bound).length}/${xs.length} within`;
  lines.push(
    `responsiveness  ${rounds} rounds, load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} at the end:`,
  );
  lines.push(
    `          query worker: main thread's event-loop utilization while it answers 40 windows ${fmt(util, 2)} (median ${median(util).toFixed(2)}, max ${Math.max(...util).toFixed(2)}; bound < 0.5: ${within(util, 0.5)})`,
  );
  lines.push(
    `          frame trace: frames ${frames.map((f) => f.frames).join(', ')}; busy (wall ≥ 30 ms, 9..12) ${frames.map((f) => f.busyFrames).join(', ')}; idle (< 10 ms, ≥ 8) ${frames.map((f) => f.idleFrames).join(', ')}`,
  );
  lines.push(
    `          frame trace: CPU in all frames ${fmt(
      frames.map((f) => f.cpuSumMs),
      0,
    )} ms (< 300 + 4 per frame); frames with CPU ≥ 10 ms (≥ 8) ${frames.map((f) => f.cpuBusyFrames).join(', ')}; ${frames.filter((f) => f.withinBounds).length}/${frames.length} within every bound`,
  );
  lines.push(`          launchElectron refusing here ${fmt(launch, 3)} s (bound < 2 s: ${within(launch, 2)})`);
  if (noGpu) {
    lines.push(
      `          record jobs without a GPU: no-driver failure ${fmt(noDriver, 2)} s (< 10), 300 ms start timeout ${fmt(startTimeout, 2)} s (< 5), probeGpu ${fmt(probe, 2)} s (< 10)`,
    );
  }
  lines.push(
    `          replay of 10 M operations: host model ${fmt(model, 2)} s + replay ${fmt(replayS, 2)} s = ${fmt(together, 2)} s, ` +
      `median ${(median(together) / WHATIF_GOAL_SECONDS).toFixed(2)} × the ${WHATIF_GOAL_SECONDS} s goal (${within(together, WHATIF_GOAL_SECONDS)})`,
  );
  return { result, lines };
}
