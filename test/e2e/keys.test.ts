/// <reference lib="dom" />
// The timeline driven from the keyboard, in Debian's Chromium against the
// real server and a real recording (normalise-concurrent: 8 streams, 425 ms,
// starting 14 ms after its origin): what each key does to the view, a held
// key moving it frame by frame, no key acting while the search box is typed
// in, the shortcut sheet, every path kept inside the recording (keys held,
// keys pressed many times, the zoom buttons, a search jump to a range at
// the end), and the first Enter in the search box going to the first match
// however soon it follows the typing.
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordingSummary } from '../../profiler/contract/api.ts';
import type { RunningServer } from '../../profiler/serve/server.ts';
import { keyLabel, SHORTCUTS, TAP_PAN, TAP_ZOOM } from '../../renderer/src/timeline/keys.ts';
import { EDGE, MIN_SPAN_NS } from '../../renderer/src/timeline/view.ts';
import { callApi, launch, openApp, serve, settled } from './browser.ts';

const file = path.resolve(import.meta.dirname, '../fixtures/recordings/normalise-concurrent.sqlite');

let browser: Browser;
let server: RunningServer;
let id: string;
let summary: RecordingSummary;
beforeAll(async () => {
  [browser, server] = await Promise.all([launch(), serve([file])]);
  id = (await callApi<{ recordingId: string }[]>(server, 'listRecordings'))[0]!.recordingId;
  summary = await callApi<RecordingSummary>(server, 'summary', id);
}, 120_000);
afterAll(async () => {
  await server?.close();
  await browser?.close();
});

type View = { start: number; end: number };
const view = (page: Page) => page.evaluate(() => window.__streamscope!.view());
const span = (v: View) => v.end - v.start;
const mid = (v: View) => (v.start + v.end) / 2;
/** The app showing [start, end] (the URL hash it writes itself), the mouse away from the rows. */
const app = async (start: number, end: number): Promise<Page> => {
  const page = await openApp(browser, `${server.url}#rec=${id}&start=${Math.round(start)}&end=${Math.round(end)}`);
  await page.mouse.move(5, 5);
  return page;
};
/** Inside the recording: never before its start (nor the origin), never after its end, but by EDGE of the view's width. */
function expectInside(v: View, what: string): void {
  const margin = EDGE * span(v) + 1;
  expect(v.start, `${what}: start`).toBeGreaterThanOrEqual(Math.max(0, summary.startNs - margin));
  expect(v.end, `${what}: end`).toBeLessThanOrEqual(summary.endNs + margin);
  expect(span(v), `${what}: width`).toBeGreaterThanOrEqual(MIN_SPAN_NS);
}
/** The view in every animation frame while `act` runs (a held key moves it frame by frame). */
async function framesDuring(page: Page, act: () => Promise<void>): Promise<View[]> {
  await page.evaluate(() => {
    const w = window as unknown as { __frames: View[]; __recording: boolean };
    w.__frames = [];
    w.__recording = true;
    const tick = () => {
      w.__frames.push(window.__streamscope!.view());
      if (w.__recording) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
  await act();
  return page.evaluate(() => {
    const w = window as unknown as { __frames: View[]; __recording: boolean };
    w.__recording = false;
    return w.__frames;
  });
}
const hold = async (page: Page, key: string, ms: number) => {
  await page.keyboard.down(key);
  await page.waitForTimeout(ms);
  await page.keyboard.up(key);
};

describe('keys on the timeline', () => {
  it('each key moves the view as the sheet says: around the middle when the mouse is elsewhere, around the mouse over the rows', async () => {
    const page = await app(200e6, 300e6);
    const steps: [string, (v: View) => View][] = [
      ['w', (v) => ({ start: mid(v) - (span(v) * TAP_ZOOM) / 2, end: mid(v) + (span(v) * TAP_ZOOM) / 2 })],
      ['ArrowUp', (v) => ({ start: mid(v) - (span(v) * TAP_ZOOM) / 2, end: mid(v) + (span(v) * TAP_ZOOM) / 2 })],
      ['+', (v) => ({ start: mid(v) - (span(v) * TAP_ZOOM) / 2, end: mid(v) + (span(v) * TAP_ZOOM) / 2 })],
      ['=', (v) => ({ start: mid(v) - (span(v) * TAP_ZOOM) / 2, end: mid(v) + (span(v) * TAP_ZOOM) / 2 })],
      ['s', (v) => ({ start: mid(v) - span(v) / TAP_ZOOM / 2, end: mid(v) + span(v) / TAP_ZOOM / 2 })],
      ['ArrowDown', (v) => ({ start: mid(v) - span(v) / TAP_ZOOM / 2, end: mid(v) + span(v) / TAP_ZOOM / 2 })],
      ['-', (v) => ({ start: mid(v) - span(v) / TAP_ZOOM / 2, end: mid(v) + span(v) / TAP_ZOOM / 2 })],
      ['a', (v) => ({ start: v.start - span(v) * TAP_PAN, end: v.end - span(v) * TAP_PAN })],
      ['ArrowLeft', (v) => ({ start: v.start - span(v) * TAP_PAN, end: v.end - span(v) * TAP_PAN })],
      ['d', (v) => ({ start: v.start + span(v) * TAP_PAN, end: v.end + span(v) * TAP_PAN })],
      ['ArrowRight', (v) => ({ start: v.start + span(v) * TAP_PAN, end: v.end + span(v) * TAP_PAN })],
    ];
    for (const [key, want] of steps) {
      const before = await view(page);
      await page.keyboard.press(key);
      const after = await view(page);
      const w = want(before);
      expect(after.start, key).toBeCloseTo(w.start, -1);
      expect(after.end, key).toBeCloseTo(w.end, -1);
    }
    // Over the rows, the time under the mouse stays under it.
    const box = (await page.locator('[data-testid="timeline-canvas"]').boundingBox())!;
    await page.mouse.move(box.x + box.width * 0.25, box.y + 20);
    const before = await view(page);
    const under = before.start + 0.25 * span(before);
    await page.keyboard.press('w');
    const after = await view(page);
    expect(span(after)).toBeCloseTo(span(before) * TAP_ZOOM, -1);
    // (Within a pixel: the mouse's position is in whole pixels.)
    expect(Math.abs(after.start + 0.25 * span(after) - under)).toBeLessThan(span(before) / box.width);
    // 0 shows the whole recording; F too while nothing is selected.
    await page.keyboard.press('0');
    expect(await view(page)).toEqual({ start: summary.startNs, end: summary.endNs });
    await page.keyboard.press('w');
    await page.keyboard.press('f');
    expect(await view(page)).toEqual({ start: summary.startNs, end: summary.endNs });
    await page.close();
  });

  it('a held key moves the view in small steps, frame after frame, until it is let go', async () => {
    const page = await app(200e6, 210e6);
    const start = await view(page);
    const frames = await framesDuring(page, () => hold(page, 'd', 1000));
    const starts = [...new Set(frames.map((v) => v.start))];
    // Not one jump per keyboard repeat: many distinct views, each a small step on from the one before.
    expect(starts.length).toBeGreaterThan(15);
    for (let k = 1; k < starts.length; k++) {
      expect(starts[k]!).toBeGreaterThan(starts[k - 1]!);
      expect(starts[k]! - starts[k - 1]!).toBeLessThan(span(start) * 0.5);
    }
    expect(starts.at(-1)! - start.start).toBeGreaterThan(span(start) * 0.5);
    // Let go: it stays (once the last frame's view is rendered).
    await settled(page);
    const stopped = await view(page);
    await page.waitForTimeout(300);
    expect(await view(page)).toEqual(stopped);
    // Held, W zooms in on and on (the width shrinks every frame).
    const zoomed = await framesDuring(page, () => hold(page, 'w', 600));
    const widths = [...new Set(zoomed.map(span))];
    expect(widths.length).toBeGreaterThan(8);
    expect(widths.at(-1)!).toBeLessThan(span(stopped) * 0.5);
    await page.close();
  });

  it('no key acts while the search box is typed in', async () => {
    const page = await app(200e6, 300e6);
    const before = await view(page);
    await page.click('[data-testid="search"]');
    await page.keyboard.type('wasd0fz+-?');
    await page.keyboard.press('ArrowLeft');
    await page.keyboard.down('a');
    await page.waitForTimeout(400);
    await page.keyboard.up('a');
    // (← moved the caret in the box, before the '?'.)
    expect(await page.inputValue('[data-testid="search"]')).toBe('wasd0fz+-a?');
    expect(await view(page)).toEqual(before);
    expect(await page.locator('[data-testid="shortcut-sheet"]').count()).toBe(0);
    await page.close();
  });

  it('? opens the sheet listing every key and gesture; no key acts behind it; Esc closes it', async () => {
    const page = await app(200e6, 300e6);
    await page.keyboard.press('?');
    const sheet = page.locator('[data-testid="shortcut-sheet"]');
    await sheet.waitFor();
    expect(await sheet.locator('[data-testid="shortcut"]').count()).toBe(SHORTCUTS.length);
    for (const s of SHORTCUTS) {
      const row = sheet.locator(`[data-testid="shortcut"][data-action="${s.action}"]`);
      expect(await row.locator('kbd').allTextContents()).toEqual(s.keys.map(keyLabel));
      expect(await row.locator('td').textContent()).toBe(s.does);
    }
    expect(await sheet.textContent()).toMatch(/Wheel.*Zoom around the cursor/);
    expect(await sheet.locator('[data-testid="gesture"]').count()).toBeGreaterThan(5);
    const before = await view(page);
    await page.keyboard.press('w');
    await page.keyboard.press('0');
    expect(await view(page)).toEqual(before);
    await page.keyboard.press('Escape');
    await sheet.waitFor({ state: 'detached' });
    // The button opens it too; a second ? closes it.
    await page.click('[data-testid="shortcuts"]');
    await sheet.waitFor();
    await page.keyboard.press('?');
    await sheet.waitFor({ state: 'detached' });
    await page.close();
  });
});

describe('the view stays inside the recording', () => {
  it('A held, or pressed many times, stops at the start; D at the end; S held stops at the whole recording', async () => {
    const page = await app(summary.startNs + 5e6, summary.startNs + 25e6);
    const held = await framesDuring(page, () => hold(page, 'a', 1200));
    for (const v of held) expectInside(v, 'A held');
    const left = await view(page);
    expect(left.start).toBeLessThan(summary.startNs);
    expect(left.start).toBeGreaterThanOrEqual(summary.startNs - EDGE * span(left) - 1);
    for (let i = 0; i < 40; i++) await page.keyboard.press('ArrowLeft');
    expect(await view(page)).toEqual(left);
    for (let i = 0; i < 4; i++) await page.keyboard.press('s');
    for (let i = 0; i < 80; i++) await page.keyboard.press('d');
    const right = await view(page);
    expectInside(right, 'D × 80');
    expect(right.end).toBeGreaterThan(summary.endNs);
    const out = await framesDuring(page, () => hold(page, 's', 2500));
    for (const v of out) expectInside(v, 'S held');
    const all = await view(page);
    expect(span(all)).toBeGreaterThan(summary.endNs - summary.startNs);
    await page.close();
  });

  it('the zoom buttons and the wheel stop at both ends too; W stops at the narrowest view', async () => {
    const page = await app(summary.startNs, summary.endNs);
    for (let i = 0; i < 6; i++) await page.click('[data-testid="zoom-out"]');
    expectInside(await view(page), '− × 6');
    const box = (await page.locator('[data-testid="timeline-canvas"]').boundingBox())!;
    await page.mouse.move(box.x + 3, box.y + 20);
    for (let i = 0; i < 10; i++) await page.mouse.wheel(0, 400);
    expectInside(await view(page), 'wheel out at the left edge');
    for (let i = 0; i < 60; i++) await page.click('[data-testid="zoom-in"]');
    const narrow = await view(page);
    expectInside(narrow, '+ × 60');
    expect(span(narrow)).toBeCloseTo(MIN_SPAN_NS, 3);
    await settled(page);
    const ticks = await page.evaluate(() =>
      window
        .__streamscope!.rulers()[0]!
        .ticks.filter((t) => t.shown)
        .map((t) => t.label),
    );
    expect(ticks.length).toBeGreaterThan(1);
    await page.close();
  });

  it('a search jump to a long range at the end of the recording stays inside it and shows the range', async () => {
    // 'teardown': the NVTX range over the last 17 ms. From a 10 ms view a jump widens the view to 20 times the
    // range (use-recording-ui.ts useGoTo) around its middle: unclamped, it would run 150 ms past the end.
    const db = new Database(file, { readonly: true });
    const r = db
      .prepare("SELECT n.id, n.start_ns AS s, n.end_ns AS e FROM nvtx_ranges n JOIN strings t ON t.id = n.name_id WHERE t.value = 'teardown'")
      .get() as {
      id: number;
      s: number;
      e: number;
    };
    db.close();
    expect((r.s + r.e) / 2 + 10 * (r.e - r.s)).toBeGreaterThan(summary.endNs + 0.1 * (summary.endNs - summary.startNs));
    const page = await app(200e6, 210e6);
    await page.fill('[data-testid="search"]', 'teardown');
    await page.waitForFunction(() => document.querySelector('[data-testid="search-count"]')?.textContent === '1 match');
    await page.press('[data-testid="search"]', 'Enter');
    await page.waitForFunction(() => document.querySelector('[data-testid="search-count"]')?.textContent === '1 / 1 match');
    const v = await view(page);
    expectInside(v, 'search jump');
    expect(v.start).toBeLessThanOrEqual(r.s);
    expect(v.end).toBeGreaterThanOrEqual(r.e);
    await page.waitForFunction((i) => window.__streamscope!.itemRect('nvtx_ranges', i) !== null, r.id);
    await page.close();
  });
});

describe('search: Enter', () => {
  it('the first Enter goes to the first match, even pressed at once after typing; Enter the next, Shift+Enter the one before', async () => {
    const db = new Database(file, { readonly: true });
    const ids = (
      db.prepare(`SELECT k.id FROM kernels k JOIN strings s ON s.id = k.name_id WHERE s.value LIKE '%normaliseColumns%' ORDER BY k.start_ns, k.id`).all() as {
        id: number;
      }[]
    ).map((k) => k.id);
    db.close();
    expect(ids.length).toBeGreaterThan(2);
    const page = await app(summary.startNs, summary.endNs);
    // The details panel shows the match selected (asked for once it is).
    const selected = (i: number) =>
      page.waitForFunction((k) => document.querySelector('[data-testid="details"] [data-field="id"]')?.textContent === String(k), i);
    const count = (c: string) => page.waitForFunction((t) => document.querySelector('[data-testid="search-count"]')?.textContent === t, c);
    await page.click('[data-testid="search"]');
    // Typed and Enter at once: before the search has answered (it waits for the typing to rest).
    await page.keyboard.type('normaliseColumns');
    await page.keyboard.press('Enter');
    await count(`1 / ${ids.length} matches`);
    await selected(ids[0]!);
    await page.keyboard.press('Enter');
    await count(`2 / ${ids.length} matches`);
    await selected(ids[1]!);
    await page.keyboard.press('Shift+Enter');
    await count(`1 / ${ids.length} matches`);
    await selected(ids[0]!);
    // The match is on screen, and the view inside the recording.
    await page.waitForFunction((i) => window.__streamscope!.itemRect('kernels', i) !== null, ids[0]!);
    expectInside(await view(page), 'search step');
    await page.close();
  });
});
