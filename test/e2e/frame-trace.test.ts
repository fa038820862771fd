// The renderer benchmark's frame-work measure (bench/frame-trace.ts) on a
// real Chromium trace of a page whose every frame does a known amount of
// work: it must find that work, frame by frame, and not the idle frames.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { frameWorkPage, mainThreadWorkPerFrame } from '../../bench/frame-trace.ts';
import { launch } from './browser.ts';

let browser: Browser;
beforeAll(async () => {
  browser = await launch();
}, 60_000);
afterAll(async () => {
  await browser?.close();
});

describe('main-thread work per frame from a Chromium trace', () => {
  it('finds the frames and the 30 ms of work in each busy one', async () => {
    const page = await browser.newPage();
    await page.setContent('<canvas id="c" width="200" height="100"></canvas>');
    const trace = path.join(os.tmpdir(), `frame-trace-test-${process.pid}.json`);
    await browser.startTracing(page, { path: trace, categories: ['toplevel', 'cc', 'benchmark'] });
    await page.evaluate(frameWorkPage);
    await browser.stopTracing();
    const { wallMs, cpuMs } = mainThreadWorkPerFrame(JSON.parse(fs.readFileSync(trace, 'utf8')));
    fs.rmSync(trace, { force: true });
    // 25 frames awaited one after the other: 24 intervals between their starts (20: a margin for a frame the trace misses).
    expect(wallMs.length).toBeGreaterThanOrEqual(20);
    expect(cpuMs).toHaveLength(wallMs.length);
    // The ten 30 ms loops are found (wall time can only add to them: a
    // thread waiting for a core waits inside its task), and a loop's frame
    // is at least its 30 ms long.
    expect(wallMs.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(10 * 30);
    expect(wallMs.filter((w) => w >= 30).length).toBeGreaterThanOrEqual(1);
    // The thread clock never reads more than the wall clock.
    wallMs.forEach((w, i) => expect(cpuMs[i]!).toBeLessThanOrEqual(w + 0.01));
    // How many frames are busy or idle, and how much CPU time they take,
    // depend on the machine's speed and load: `npm run bench -- --only
    // responsiveness` prints them against the bounds once asserted here.
  }, 60_000);

  it('says so when the trace has no renderer main thread', () => {
    expect(() => mainThreadWorkPerFrame([])).toThrow(/no renderer main thread/);
  });

  it('a task crossing a frame boundary counts in each frame for its overlap, CPU time pro rata', () => {
    const meta = { ph: 'M', name: 'thread_name', pid: 1, tid: 1, ts: 0, args: { name: 'CrRendererMain' } };
    const frame = (ts: number) => ({ ph: 'X', name: 'ProxyMain::BeginMainFrame', pid: 1, tid: 1, ts, dur: 100 });
    const task = (ts: number, dur: number, tdur: number) => ({ ph: 'X', name: 'ThreadControllerImpl::RunTask', pid: 1, tid: 1, ts, dur, tdur });
    // Frames at 0, 16 ms, 32 ms; a 20 ms task from 10 ms (8 ms on a CPU), another task on another thread.
    const r = mainThreadWorkPerFrame([meta, frame(0), frame(16_000), frame(32_000), task(10_000, 20_000, 8_000), { ...task(0, 5_000, 5_000), tid: 2 }]);
    expect(r.wallMs).toEqual([6, 14]);
    expect(r.cpuMs[0]).toBeCloseTo(2.4, 6);
    expect(r.cpuMs[1]).toBeCloseTo(5.6, 6);
  });
});
