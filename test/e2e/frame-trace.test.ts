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
beforeAll(async () => { browser = await launch(); }, 60_000);
afterAll(async () => { await browser?.close(); });

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
    const work = mainThreadWorkPerFrame(JSON.parse(fs.readFileSync(trace, 'utf8')));
    fs.rmSync(trace, { force: true });
    const busy = work.filter((w) => w >= 30);
    expect(busy.length).toBeGreaterThanOrEqual(9);
    expect(busy.length).toBeLessThanOrEqual(11);
    expect(Math.max(...busy)).toBeLessThan(60);
    expect(work.filter((w) => w < 10).length).toBeGreaterThanOrEqual(8);
  }, 60_000);

  it('says so when the trace has no renderer main thread', () => {
    expect(() => mainThreadWorkPerFrame([])).toThrow(/no renderer main thread/);
  });
});
