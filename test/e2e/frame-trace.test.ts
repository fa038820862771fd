// The renderer benchmark's frame-work measure (bench/frame-trace.ts) on a
// real Chromium trace of a page whose every frame does a known amount of
// work: it must find that work, frame by frame, and not the idle frames.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { mainThreadWorkPerFrame } from '../../bench/frame-trace.ts';
import { launch } from './browser.ts';

let browser: Browser;
beforeAll(async () => {
  browser = await launch();
}, 60_000);
afterAll(async () => {
  await browser?.close();
});

describe('main-thread work per frame from a Chromium trace', () => {
  it('finds 30 ms of work in each busy frame and little in idle ones', async () => {
    const page = await browser.newPage();
    await page.setContent('<canvas id="c" width="200" height="100"></canvas>');
    const trace = path.join(os.tmpdir(), `frame-trace-test-${process.pid}.json`);
    await browser.startTracing(page, { path: trace, categories: ['toplevel', 'cc', 'benchmark'] });
    await page.evaluate(async () => {
      const ctx = (document.getElementById('c') as HTMLCanvasElement).getContext('2d')!;
      const frame = () => new Promise((r) => requestAnimationFrame(() => r(null)));
      for (let i = 0; i < 10; i++) await frame(); // idle frames (a redraw each, nothing else)
      for (let i = 0; i < 10; i++) {
        await frame();
        const until = performance.now() + 30;
        while (performance.now() < until) ctx.fillRect(i, 0, 1, 1);
      }
      for (let i = 0; i < 5; i++) await frame();
    });
    await browser.stopTracing();
    const { wallMs, cpuMs } = mainThreadWorkPerFrame(JSON.parse(fs.readFileSync(trace, 'utf8')));
    fs.rmSync(trace, { force: true });
    expect(cpuMs).toHaveLength(wallMs.length);
    // Each busy frame holds its 30 ms loop (wall time can only add to it:
    // on a loaded machine the thread also waits for a core, which is why no
    // upper bound is put on it here); the idle ones little.
    const busy = wallMs.filter((w) => w >= 30);
    expect(busy.length).toBeGreaterThanOrEqual(9);
    expect(busy.length).toBeLessThanOrEqual(12);
    expect(wallMs.filter((w) => w < 10).length).toBeGreaterThanOrEqual(8);
    // The thread clock: never more than the wall time, never more than the
    // loop and the frame's own work, and clearly there in the busy frames.
    wallMs.forEach((w, i) => expect(cpuMs[i]!).toBeLessThanOrEqual(w + 0.01));
    // All frames together: the ten 30 ms loops and a few ms per frame, not
    // more (a frame may hold two loops when a requestAnimationFrame slips on
    // a loaded machine, so the bound is on the sum, not on each frame).
    expect(cpuMs.reduce((a, b) => a + b, 0)).toBeLessThan(10 * 30 + 4 * wallMs.length);
    expect(cpuMs.filter((c) => c >= 10).length).toBeGreaterThanOrEqual(8);
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
