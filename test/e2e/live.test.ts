/// <reference lib="dom" />
// The live timeline (issue 14): a recording grows while the page watches
// it. The recorder's own ingest follows a stream directory that a recorded
// stream is appended to chunk by chunk (helpers/live-feed.ts, in a process
// of its own, as a recorder is), and browser mode serves the file from the
// moment it exists. New operations appear, the view follows the end,
// panning away offers "Jump to now", which works; at the end the file is a
// normal finished recording.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syntheticStreamToolPath } from '../../profiler/native/paths.ts';
import { benchLaunchRows, finishedRecordingProblems, type LiveFeed } from '../helpers/live-feed.ts';
import { requireFile, tempDir } from '../helpers/native.ts';
import { watchLiveFeed, type WatchedFeed } from './browser.ts';

// 9 s of a run of 1 M launches per minute, appended in 50 pieces 500 ms apart: 25 s, so that it still
// grows when the steps before the last one took long (the whole suite runs beside it on two cores).
const LAUNCHES = 150_000;
const CHUNKS = 50;

let dir: string;
let file: string;
let browser: Browser;
let feed: LiveFeed;
let page: Page;
let watched: WatchedFeed;

beforeAll(async () => {
  dir = tempDir('live-e2e');
  const stream = path.join(dir, 'run.ssr');
  execFileSync(requireFile(syntheticStreamToolPath()), ['--out', stream, '--bench-launches', String(LAUNCHES), '--bench-period-ns', '60000']);
  file = path.join(dir, 'live.sqlite');
  // The first piece waits for the page: it opens the recording while it is still empty.
  watched = await watchLiveFeed({ stream, out: file, chunks: CHUNKS, intervalMs: 500, startDelayMs: 3000 });
  ({ feed, browser } = watched);
}, 120_000);
afterAll(async () => {
  await watched?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const state = () => watched.state();
const view = () => page.evaluate(() => window.__streamscope!.view());
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The kernel that starts last among those stored now (read from the file: the ingest writes it from another process). */
function latestKernel(): { id: number; start: number } | undefined {
  const db = new Database(file, { readonly: true, timeout: 5000 });
  try {
    return db.prepare('SELECT id, start_ns AS start FROM kernels ORDER BY start_ns DESC LIMIT 1').get() as { id: number; start: number } | undefined;
  } finally {
    db.close();
  }
}

describe('a recording watched while it grows', () => {
  it('opens while empty and says it is live', async () => {
    const s = await state();
    expect(s.live).toBe(true);
    expect(s.counts.kernels).toBe(0);
    page = await browser.newPage({ viewport: { width: 1400, height: 800 } });
    await page.goto(watched.server.url);
    await page.waitForSelector('[data-testid="live-badge"]');
    // No "incomplete recording" warning for a recording being written.
    expect(await page.locator('[data-testid="warning-banner"]').count()).toBe(0);
  });

  it('shows new operations as they arrive, and follows the end', async () => {
    // Streams appear as rows once their first operations are in.
    await page.waitForSelector('[data-testid^="row-stream:"]', { timeout: 20_000 });
    // Zoom in (following the end, a zoom keeps the end where it is) until kernels are drawn one by one.
    await page.locator('[data-testid="timeline-canvas"]').hover();
    for (let i = 0; i < 9; i++) {
      await page.mouse.wheel(0, -500);
      await sleep(30);
    }
    await page.waitForFunction(() => {
      const v = window.__streamscope!.view();
      return v.end - v.start < 5e6;
    });
    expect(await page.locator('[data-testid="jump-to-now"]').count()).toBe(0);
    // A kernel stored after the page opened is drawn, at the right end of the view.
    let drawn = false;
    for (let tries = 0; tries < 6 && !drawn; tries++) {
      await sleep(300);
      const k = latestKernel();
      if (!k) continue;
      const deadline = Date.now() + 3000;
      while (!drawn && Date.now() < deadline) {
        drawn = await page.evaluate((kid) => window.__streamscope!.itemRect('kernels', kid) !== null, k.id);
        if (!drawn) await sleep(40);
      }
    }
    expect(drawn).toBe(true);
    // The view moves with the data: it comes to end at least where the data ends now, its width kept.
    const before = await state();
    await page.waitForFunction((end) => window.__streamscope!.view().end >= end, before.endNs, { timeout: 15_000 });
    const v = await view();
    expect(v.end - v.start).toBeLessThan(5e6);
  });

  it('stops following when the user pans away, and "Jump to now" goes back', async () => {
    await page.locator('[data-testid="timeline-canvas"]').hover();
    for (let i = 0; i < 8; i++) await page.keyboard.press('a');
    await page.waitForSelector('[data-testid="jump-to-now"]');
    const away = await view();
    await sleep(1500);
    expect(await view()).toEqual(away);
    const s = await state();
    expect(s.live).toBe(true);
    expect(s.endNs).toBeGreaterThan(away.end);
    await page.click('[data-testid="jump-to-now"]');
    await page.waitForSelector('[data-testid="jump-to-now"]', { state: 'detached' });
    // Back at the end the page knows (its last poll), with the same width; then at the end as it was asked here.
    const back = await view();
    expect(back.end).toBeGreaterThan(away.end);
    expect(back.end - back.start).toBeCloseTo(away.end - away.start, -3);
    await page.waitForFunction((end) => window.__streamscope!.view().end >= end, s.endNs, { timeout: 15_000 });
    // And follows again.
    const later = await state();
    await page.waitForFunction((end) => window.__streamscope!.view().end >= end, later.endNs, { timeout: 15_000 });
  });

  it('ends as a normal finished recording, with its findings', async () => {
    const done = await feed.done;
    expect(done.complete).toBe(true);
    await page.waitForSelector('[data-testid="live-badge"]', { state: 'detached', timeout: 10_000 });
    const s = await state();
    expect(s).toMatchObject({ live: false, complete: true, counts: { kernels: LAUNCHES } });
    expect(finishedRecordingProblems(file, dir, benchLaunchRows(LAUNCHES))).toEqual([]);
    // Findings on the final data: 1.5 µs kernels every 60 µs leave the GPU idle.
    await page.waitForSelector('[data-testid="findings"] [data-kind="low-utilization"]', { timeout: 20_000 });
    expect(await page.locator('[data-testid="warning-banner"]').count()).toBe(0);
  });
});
