/// <reference lib="dom" />
// The renderer in Debian's Chromium against the real server (browser mode)
// and the real H100 recordings: rows, details, zoom, search, reload, stats,
// bad files. What the page shows is compared with the SQLite file itself.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../profiler/serve/server.ts';
import { tempDir } from '../helpers/native.ts';
import { launch, openApp, serve, settled } from './browser.ts';

const fixtures = path.resolve(import.meta.dirname, '../fixtures/recordings');
const concurrent = path.join(fixtures, 'normalise-concurrent.sqlite');
const defaultStream = path.join(fixtures, 'normalise-default-stream.sqlite');
const multiGpu = path.join(fixtures, 'normalise-multi-gpu-h200x2.sqlite');

let browser: Browser;
let server: RunningServer;
let ids: Record<string, string>;
beforeAll(async () => {
  [browser, server] = await Promise.all([launch(), serve([concurrent, defaultStream, multiGpu])]);
  const list = await api<{ recordingId: string; name: string }[]>('listRecordings');
  ids = Object.fromEntries(list.map((r) => [r.name, r.recordingId]));
}, 120_000);
afterAll(async () => {
  await server?.close();
  await browser?.close();
});

async function api<T>(method: string, ...args: unknown[]): Promise<T> {
  const r = await fetch(`${server.url.split('?')[0]}api/${method}`, {
    method: 'POST',
    headers: { 'x-streamscope-token': server.token },
    body: JSON.stringify({ args }),
  });
  return (await r.json()) as T;
}

function sql<T>(file: string, query: string, ...args: unknown[]): T[] {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare(query).all(...args) as T[];
  } finally {
    db.close();
  }
}

/** The app at a given recording and range (the URL hash the app itself writes). */
const at = (file: string, start: number, end: number, extra = '') =>
  `${server.url}#rec=${ids[path.basename(file)]}&start=${Math.round(start)}&end=${Math.round(end)}${extra}`;

const field = (page: Page, name: string) => page.locator(`[data-testid="details"] [data-field="${name}"]`).textContent();

async function clickItem(page: Page, table: string, id: number): Promise<void> {
  await page.waitForFunction(([t, i]) => window.__streamscope!.itemRect(t as string, i as number) !== null, [table, id] as const);
  const r = (await page.evaluate(([t, i]) => window.__streamscope!.itemRect(t as string, i as number), [table, id] as const))!;
  await page.mouse.click(r.x + r.w / 2, r.y + r.h / 2);
}

describe('timeline in Chromium', () => {
  it('has one labelled row per stream with work (as in SQLite), grouped per GPU, and the thread rows', async () => {
    const page = await openApp(browser, at(concurrent, 0, 5e8));
    const want = sql<{ id: number; cupti: number; flags: number; priority: number | null }>(
      concurrent,
      `
      SELECT s.id, s.cupti_stream_id AS cupti, s.flags, s.priority FROM streams s
      WHERE s.id IN (SELECT stream_id FROM kernels UNION SELECT stream_id FROM memcpys UNION SELECT stream_id FROM memsets) ORDER BY 1`,
    );
    expect(want.length).toBe(8);
    for (const s of want) {
      const label = await page.locator(`[data-testid="row-stream:${s.id}"]`).textContent();
      expect(label).toContain(`Stream ${s.cupti}`);
      expect(label).toContain(s.flags & 1 ? 'legacy-default' : s.flags & 2 ? 'non-blocking' : 'blocking');
      expect(label).toContain(`prio ${s.priority}`);
      expect(label).toMatch(/\d+(\.\d)?%/);
    }
    expect(await page.locator('[data-testid^="row-stream:"]').count()).toBe(want.length);
    const threads = sql<{ pid: number; tid: number }>(concurrent, 'SELECT DISTINCT pid, tid FROM api_calls');
    for (const t of threads) expect(await page.locator(`[data-testid="row-api:${t.pid}:${t.tid}"]`).count()).toBe(1);
    expect(await page.locator('[data-testid="row-conc:1"]').count()).toBe(1);
    expect(await page.locator('[data-testid="legend"]').textContent()).toContain('Memcpy HtoD');
    await page.close();
  });

  it('a two-GPU recording gets a group per device with its own streams', async () => {
    const page = await openApp(browser, `${server.url}#rec=${ids[path.basename(multiGpu)]}`);
    const devices = sql<{ id: number; n: number }>(
      multiGpu,
      `SELECT device_id AS id, count(DISTINCT stream_id) AS n FROM (SELECT device_id, stream_id FROM kernels UNION ALL SELECT device_id, stream_id FROM memcpys) GROUP BY 1`,
    );
    expect(devices.length).toBe(2);
    for (const d of devices) {
      await expect(page.locator(`[data-testid="group-gpu:${d.id}"]`).count()).resolves.toBe(1);
      await expect(page.locator(`[data-testid="row-conc:${d.id}"]`).count()).resolves.toBe(1);
    }
    expect(await page.locator('[data-testid^="row-stream:"]').count()).toBe(devices.reduce((a, d) => a + d.n, 0));
    await page.close();
  });

  it('clicking a kernel shows exactly the stored values; its launch is linked both ways; a reload reopens the same view', async () => {
    const k = sql<Record<string, number | null>>(concurrent, 'SELECT * FROM kernels ORDER BY start_ns LIMIT 1')[0]!;
    const name = sql<{ value: string }>(concurrent, 'SELECT value FROM strings WHERE id = ?', k.name_id)[0]!.value;
    const pad = (k.end_ns! - k.start_ns!) * 3;
    const page = await openApp(browser, at(concurrent, k.start_ns! - pad, k.end_ns! + pad));
    await clickItem(page, 'kernels', k.id!);
    await page.waitForSelector('[data-testid="details"] [data-field="start_ns"]');
    for (const [col, value] of Object.entries(k)) expect(await field(page, col), col).toBe(value === null ? '—' : String(value));
    expect(await field(page, 'name')).toBe(name);
    // The kernel's own name, then both full forms: demangled and as stored (mangled).
    const demangled = sql<{ demangled: string }>(concurrent, 'SELECT demangled FROM strings WHERE id = ?', k.name_id)[0]!.demangled;
    expect(await page.locator('[data-testid="details-name"]').textContent()).toBe('normaliseColumns');
    expect(await page.locator('[data-testid="details-demangled"]').textContent()).toBe(demangled);
    expect(await page.locator('[data-testid="details-stored-name"]').textContent()).toBe(name);
    expect(await field(page, 'duration_ns')).toBe(String(k.end_ns! - k.start_ns!));
    expect(await page.locator('[data-testid="details"]').textContent()).toContain(`(${k.grid_x}, ${k.grid_y}, ${k.grid_z})`);
    const launch = sql<{ id: number; name: string }>(
      concurrent,
      'SELECT a.id, s.value AS name FROM api_calls a JOIN strings s ON s.id = a.name_id WHERE a.correlation_id = ?',
      k.correlation_id,
    )[0]!;
    await expect(page.locator('[data-testid="related"]').first().textContent()).resolves.toContain(launch.name);
    await page.waitForFunction((id) => location.hash.includes(`sel=kernels%3A${id}`), k.id);
    // The other direction: the launch call lists the kernel.
    await page.locator('[data-testid="related"]').first().click();
    await page.waitForFunction((id) => document.querySelector('[data-testid="details"] [data-field="id"]')?.textContent === String(id), launch.id);
    expect(await field(page, 'correlation_id')).toBe(String(k.correlation_id));
    expect(await page.locator('[data-testid="related"]').count()).toBeGreaterThan(0);
    // Reload: the same recording, range and selection.
    await page.waitForFunction((id) => location.hash.includes(`sel=api_calls%3A${id}`), launch.id);
    const before = await page.evaluate(() => window.__streamscope!.view());
    await page.reload();
    await page.waitForFunction(() => (window.__streamscope?.dataFrames ?? 0) > 0);
    await page.waitForFunction((id) => document.querySelector('[data-testid="details"] [data-field="id"]')?.textContent === String(id), launch.id);
    const after = await page.evaluate(() => window.__streamscope!.view());
    expect(Math.abs(after.start - before.start)).toBeLessThanOrEqual(1);
    expect(Math.abs(after.end - before.end)).toBeLessThanOrEqual(1);
    expect(page.url()).toContain('token=');
    await page.close();
  });

  it('a copy shows its bytes, memory kinds and bandwidth as stored; hovering shows a tooltip', async () => {
    const m = sql<Record<string, number>>(concurrent, 'SELECT * FROM memcpys WHERE copy_kind = 1 ORDER BY start_ns LIMIT 1')[0]!;
    const pad = (m.end_ns! - m.start_ns!) * 2;
    const page = await openApp(browser, at(concurrent, m.start_ns! - pad, m.end_ns! + pad));
    await clickItem(page, 'memcpys', m.id!);
    await page.waitForSelector('[data-testid="details"] [data-field="bytes"]');
    for (const col of ['id', 'bytes', 'copy_kind', 'src_kind', 'dst_kind', 'stream_id', 'correlation_id', 'start_ns', 'end_ns'])
      expect(await field(page, col), col).toBe(String(m[col]));
    const gbps = m.bytes! / (m.end_ns! - m.start_ns!);
    expect(Number(await field(page, 'GB/s'))).toBeCloseTo(gbps, 1);
    expect(await field(page, 'src')).toBe('pinned');
    const r = (await page.evaluate((id) => window.__streamscope!.itemRect('memcpys', id), m.id!))!;
    await page.mouse.move(r.x + r.w / 2, r.y + r.h / 2);
    await page.waitForSelector('[data-testid="tooltip"]');
    expect(await page.locator('[data-testid="tooltip"]').textContent()).toMatch(/Memcpy HtoD.*duration/);
    await page.close();
  });

  it('zooming and panning ask for one window at a time, and the window of where they stopped comes', async () => {
    const page = await openApp(browser, at(concurrent, 0, 5e8));
    await settled(page);
    // Each window answer held back 500 ms, as a large recording's would be: the panning outruns the server.
    await page.route('**/api/window', async (route) => {
      await new Promise((r) => setTimeout(r, 500));
      await route.continue();
    });
    let inFlight = 0;
    let most = 0;
    const asked: { startNs: number; endNs: number }[] = [];
    const isWindow = (url: string) => url.endsWith('/api/window');
    page.on('request', (r) => {
      if (!isWindow(r.url())) return;
      most = Math.max(most, ++inFlight);
      asked.push((JSON.parse(r.postData()!) as { args: [string, { startNs: number; endNs: number }] }).args[1]);
    });
    const landed = (r: { url(): string }) => {
      if (isWindow(r.url())) inFlight--;
    };
    page.on('requestfinished', landed);
    page.on('requestfailed', landed);
    // Each zoom step changes the resolution, so each needs a window of its own.
    for (let i = 0; i < 12; i++) {
      await page.keyboard.press(i % 3 === 2 ? 'd' : 'w');
      await page.waitForTimeout(40);
    }
    await settled(page);
    const view = await page.evaluate(() => window.__streamscope!.view());
    expect(most).toBe(1);
    // 12 view changes, throttled to 30 ms and one at a time: a few windows, not one per change.
    expect(asked.length).toBeGreaterThan(1);
    expect(asked.length).toBeLessThan(8);
    const last = asked.at(-1)!;
    expect(last.startNs).toBeLessThanOrEqual(view.start);
    expect(last.endNs).toBeGreaterThanOrEqual(view.end);
    await page.close();
  });

  it('zoom (wheel, keys, range selection) changes the view and the ruler', async () => {
    const page = await openApp(browser, server.url);
    // The ruler is a canvas: its labels as it drew them (the test hooks).
    const ticks = () => page.evaluate(() => window.__streamscope!.rulers()[0]!.ticks.map((t) => t.label));
    const before = await ticks();
    expect(before.length).toBeGreaterThan(3);
    expect(before.every((t) => /^[\d.]+ (ns|µs|ms|s)$/.test(t))).toBe(true);
    const box = (await page.locator('[data-testid="timeline-canvas"]').boundingBox())!;
    await page.mouse.move(box.x + box.width * 0.75, box.y + 10);
    for (let i = 0; i < 8; i++) await page.mouse.wheel(0, -200);
    await page.waitForFunction((b) => JSON.stringify(window.__streamscope!.rulers()[0]!.ticks.map((t) => t.label)) !== b, JSON.stringify(before));
    expect(await ticks()).not.toEqual(before);
    // W zooms in, D pans right.
    const v0 = await page.evaluate(() => window.__streamscope!.view());
    await page.keyboard.press('w');
    await page.keyboard.press('d');
    const v1 = await page.evaluate(() => window.__streamscope!.view());
    expect(v1.end - v1.start).toBeLessThan(v0.end - v0.start);
    expect(v1.start).toBeGreaterThan(v0.start);
    // Shift-drag selects a range, shown with its duration; "Zoom to range" zooms there.
    await page.keyboard.down('Shift');
    await page.mouse.move(box.x + box.width * 0.25, box.y + 30);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.5, box.y + 30, { steps: 5 });
    await page.mouse.up();
    await page.keyboard.up('Shift');
    await page.waitForSelector('[data-testid="range-duration"]');
    await page.click('[data-testid="zoom-to-range"]');
    await page.waitForFunction((w) => {
      const v = window.__streamscope!.view();
      return Math.abs(v.end - v.start - (w.end - w.start) / 4) < (w.end - w.start) * 0.02;
    }, v1);
    // Dragging on the ruler selects too; Z zooms.
    const ruler = (await page.locator('[data-testid="ruler"]').boundingBox())!;
    const v2 = await page.evaluate(() => window.__streamscope!.view());
    await page.mouse.move(ruler.x + ruler.width * 0.4, ruler.y + 10);
    await page.mouse.down();
    await page.mouse.move(ruler.x + ruler.width * 0.6, ruler.y + 10, { steps: 4 });
    await page.mouse.up();
    await page.keyboard.press('z');
    await page.waitForFunction((w) => {
      const v = window.__streamscope!.view();
      return v.end - v.start < (w.end - w.start) * 0.3;
    }, v2);
    // Fit shows the whole recording again.
    await page.click('[data-testid="zoom-all"]');
    const s = await api<{ startNs: number; endNs: number }>('summary', ids[path.basename(concurrent)]);
    await page.waitForFunction((sum) => {
      const v = window.__streamscope!.view();
      return v.start === sum.startNs && v.end === sum.endNs;
    }, s);
    await settled(page);
    expect((await page.evaluate(() => window.__streamscope!.frames)).length).toBeGreaterThan(2);
    await page.close();
  });

  it('search counts the matches as in SQLite, steps to them and selects them', async () => {
    const page = await openApp(browser, server.url);
    const n = sql<{ n: number }>(
      concurrent,
      `SELECT count(*) AS n FROM kernels k JOIN strings s ON s.id = k.name_id WHERE s.value LIKE '%normaliseColumns%'`,
    )[0]!.n;
    const first = sql<{ id: number }>(
      concurrent,
      `SELECT k.id FROM kernels k JOIN strings s ON s.id = k.name_id WHERE s.value LIKE '%normaliseColumns%' ORDER BY k.start_ns LIMIT 1`,
    )[0]!;
    await page.fill('[data-testid="search"]', 'normaliseColumns');
    await page.waitForFunction((c) => document.querySelector('[data-testid="search-count"]')?.textContent === `${c} matches`, n);
    await page.press('[data-testid="search"]', 'Enter');
    await page.waitForSelector('[data-testid="details"] [data-field="name"]');
    expect(await field(page, 'name')).toContain('normaliseColumns');
    expect(await field(page, 'id')).toBe(String(first.id));
    expect(await page.locator('[data-testid="search-count"]').textContent()).toBe(`1 / ${n} matches`);
    // The match is on screen.
    await page.waitForFunction((id) => window.__streamscope!.itemRect('kernels', id) !== null, first.id);
    await page.click('[data-testid="search-next"]');
    expect(await page.locator('[data-testid="search-count"]').textContent()).toBe(`2 / ${n} matches`);
    // Kind filter: DtoH copies only.
    await page.fill('[data-testid="search"]', '');
    await page.selectOption('[data-testid="search-kind"]', 'memcpy-d2h');
    const d2h = sql<{ n: number }>(concurrent, 'SELECT count(*) AS n FROM memcpys WHERE copy_kind = 2')[0]!.n;
    await page.waitForFunction((c) => document.querySelector('[data-testid="search-count"]')?.textContent === `${c} matches`, d2h);
    await page.close();
  });

  it('rows can be hidden and groups folded; both survive a reload', async () => {
    const page = await openApp(browser, at(concurrent, 0, 5e8));
    await page.hover('[data-testid="row-stream:9"]');
    await page.click('[data-testid="hide-stream:9"]');
    expect(await page.locator('[data-testid="row-stream:9"]').count()).toBe(0);
    await page.click('[data-testid="fold-proc:737"]');
    expect(await page.locator('[data-testid^="row-api:"]').count()).toBe(0);
    await page.waitForFunction(() => location.hash.includes('hide=stream%3A9') && location.hash.includes('fold=proc%3A737'));
    await page.reload();
    await page.waitForFunction(() => (window.__streamscope?.dataFrames ?? 0) > 0);
    expect(await page.locator('[data-testid="row-stream:9"]').count()).toBe(0);
    expect(await page.locator('[data-testid^="row-api:"]').count()).toBe(0);
    expect(await page.locator('[data-testid^="row-stream:"]').count()).toBe(7);
    await page.selectOption('[data-testid="hidden-rows"]', 'stream:9');
    expect(await page.locator('[data-testid="row-stream:9"]').count()).toBe(1);
    await page.close();
  });

  it('the default-stream run, in its own tab, shows its finding with the what-if estimate', async () => {
    const page = await openApp(browser, server.url);
    expect(await page.locator('[data-testid="recording-tab"]').count()).toBe(3);
    await page.locator('[data-testid="recording-tab"]', { hasText: 'default-stream' }).click();
    await page.waitForSelector('[data-testid="finding"]:has-text("legacy default stream")');
    expect(await page.locator('[data-testid="finding"]').first().textContent()).toMatch(/what if fixed: .* → /);
    await page.waitForFunction((id) => location.hash.includes(`rec=${id}`), ids[path.basename(defaultStream)]);
    await page.close();
  });
});

describe('stats in Chromium', () => {
  it('kernel, copy and stream tables with the stored numbers, sortable, and the overlap matrix', async () => {
    const page = await openApp(browser, server.url);
    await page.click('[data-testid="tab-stats"]');
    await page.waitForSelector('[data-testid="stats-kernels"] tbody tr');
    const cell = page.locator('[data-testid="stats-kernels"] tbody tr').first().locator('td');
    const k = sql<{ demangled: string; n: number }>(
      concurrent,
      'SELECT s.demangled, count(*) AS n FROM kernels k JOIN strings s ON s.id = k.name_id GROUP BY 1',
    )[0]!;
    // The short name, the full demangled one on hover.
    expect(await cell.nth(0).getAttribute('title')).toBe(k.demangled);
    expect(await cell.nth(0).textContent()).toBe('normaliseColumns');
    expect(await cell.nth(1).textContent()).toBe(String(k.n));
    const copies = sql<{ n: number; bytes: number }>(concurrent, 'SELECT count(*) AS n, sum(bytes) AS bytes FROM memcpys WHERE copy_kind = 1')[0]!;
    const h2d = page.locator('[data-testid="stats-copies"] tbody tr', { hasText: 'HtoD' }).first().locator('td');
    expect(await h2d.nth(3).textContent()).toBe(String(copies.n));
    expect(await h2d.nth(4).getAttribute('title')).toBe(`${copies.bytes.toLocaleString('en-US')} bytes`);
    const streamsBefore = await page.locator('[data-testid="stats-streams"] tbody tr td:first-child').allTextContents();
    await page.click('[data-testid="stats-streams"] th:has-text("stream")');
    const streamsAfter = await page.locator('[data-testid="stats-streams"] tbody tr td:first-child').allTextContents();
    expect([...streamsAfter].sort()).toEqual([...streamsBefore].sort());
    expect(streamsAfter).toEqual([...streamsAfter].sort((a, b) => Number(b) - Number(a)));
    expect(await page.locator('[data-testid="stats-matrix"] tbody tr').count()).toBe(streamsAfter.length);
    await page.waitForFunction(() => location.hash.includes('tab=stats'));
    await page.close();
  });
});

describe('bad files', () => {
  it('a file that is not a recording shows a clear message naming it; the good one still opens', async () => {
    const dir = tempDir('e2e');
    const bad = path.join(dir, 'notes.sqlite');
    fs.writeFileSync(bad, 'this is not a database');
    const s = await serve([bad, concurrent]);
    try {
      const page = await openApp(browser, s.url);
      const banner = page.locator('[data-testid="error-banner"]');
      await banner.waitFor();
      expect(await banner.textContent()).toContain(bad);
      expect(await banner.textContent()).toMatch(/not a SQLite database/);
      expect(await banner.textContent()).toContain('Not a StreamScope recording');
      expect(await page.locator('[data-testid^="row-stream:"]').count()).toBeGreaterThan(0);
      // Dismissable; the app stays usable.
      await banner.locator('button').click();
      expect(await page.locator('[data-testid="error-banner"]').count()).toBe(0);
      await page.close();
    } finally {
      await s.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the API refuses requests without the token and unknown methods', async () => {
    const base = server.url.split('?')[0]!;
    expect((await fetch(`${base}api/listRecordings`, { method: 'POST', body: '{}' })).status).toBe(403);
    expect((await fetch(`${base}api/dropTables`, { method: 'POST', headers: { 'x-streamscope-token': server.token }, body: '{}' })).status).toBe(400);
    expect(
      (await fetch(`${base}api/openRecording`, { method: 'POST', headers: { 'x-streamscope-token': server.token }, body: '{"args":["/etc/passwd"]}' })).status,
    ).toBe(403);
    expect((await fetch(`${base}..%2f..%2fpackage.json`)).status).not.toBe(200);
  });
});
