/// <reference lib="dom" />
// The renderer in Debian's Chromium against the real server (browser mode)
// and the real H100 recordings.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../profiler/serve/server.ts';
import { tempDir } from '../helpers/native.ts';
import { launch, openApp, serve } from './browser.ts';

const fixtures = path.resolve(import.meta.dirname, '../fixtures/recordings');
const concurrent = path.join(fixtures, 'normalise-concurrent.sqlite');
const defaultStream = path.join(fixtures, 'normalise-default-stream.sqlite');

let browser: Browser;
let server: RunningServer;
beforeAll(async () => {
  browser = await launch();
  server = await serve([concurrent, defaultStream]);
}, 120_000);
afterAll(async () => {
  await server?.close();
  await browser?.close();
});

const rows = <T>(file: string, sql: string, ...args: unknown[]) => {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare(sql).all(...args) as T[];
  } finally {
    db.close();
  }
};

describe('timeline in Chromium', () => {
  it('has a row for every stream with work, and the thread rows', async () => {
    const page = await openApp(browser, server.url);
    const want = rows<{ id: number }>(concurrent, `SELECT DISTINCT stream_id AS id FROM (SELECT stream_id FROM kernels UNION SELECT stream_id FROM memcpys) ORDER BY 1`);
    for (const { id } of want) await expect(page.locator(`[data-testid="row-stream:${id}"]`).count()).resolves.toBe(1);
    expect(await page.locator('[data-testid^="row-stream:"]').count()).toBe(want.length);
    expect(await page.locator('[data-testid^="row-api:"]').count()).toBeGreaterThan(0);
    await page.close();
  });

  it('clicking a kernel shows exactly the stored values, and its launch', async () => {
    const k = rows<Record<string, number>>(concurrent, 'SELECT * FROM kernels ORDER BY start_ns LIMIT 1')[0]!;
    const recId = (await (await fetch(`${server.url.split('?')[0]}api/listRecordings`, { method: 'POST', headers: { 'x-streamscope-token': server.token }, body: '{}' })).json() as { recordingId: string }[])[0]!.recordingId;
    const pad = (k.end_ns! - k.start_ns!) * 2;
    const url = `${server.url}#rec=${recId}&start=${k.start_ns! - pad}&end=${k.end_ns! + pad}`;
    const page = await openApp(browser, url);
    await page.waitForFunction((id) => window.__streamscope!.itemRect('kernels', id) !== null, k.id);
    const r = (await page.evaluate((id) => window.__streamscope!.itemRect('kernels', id), k.id))!;
    await page.mouse.click(r.x + r.w / 2, r.y + r.h / 2);
    const field = (name: string) => page.locator(`[data-testid="details"] [data-field="${name}"]`).textContent();
    await page.waitForSelector('[data-testid="details"] [data-field="start_ns"]');
    for (const name of ['id', 'start_ns', 'end_ns', 'grid_x', 'block_x', 'registers_per_thread', 'correlation_id', 'stream_id']) {
      expect(await field(name), name).toBe(String(k[name]));
    }
    expect(await field('duration_ns')).toBe(String(k.end_ns! - k.start_ns!));
    await expect(page.locator('[data-testid="related"]').first().textContent()).resolves.toMatch(/^cudaLaunchKernel/);
    expect(page.url()).toContain(`sel=kernels%3A${k.id}`);
    await page.close();
  });

  it('zooming changes the ruler', async () => {
    const page = await openApp(browser, server.url);
    const ticks = () => page.locator('[data-testid="ruler"] .tick text').allTextContents();
    const before = await ticks();
    const box = (await page.locator('[data-testid="timeline-canvas"]').boundingBox())!;
    await page.mouse.move(box.x + box.width * 0.75, box.y + 10);
    for (let i = 0; i < 8; i++) await page.mouse.wheel(0, -100);
    await page.waitForFunction((b) => JSON.stringify(Array.from(document.querySelectorAll('[data-testid="ruler"] .tick text')).map((t) => t.textContent)) !== b, JSON.stringify(before));
    const after = await ticks();
    expect(after).not.toEqual(before);
    // Shift-drag a range: the view becomes that range.
    const v0 = await page.evaluate(() => window.__streamscope!.view());
    await page.keyboard.down('Shift');
    await page.mouse.move(box.x + box.width * 0.25, box.y + 30);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.5, box.y + 30, { steps: 5 });
    await page.mouse.up();
    await page.keyboard.up('Shift');
    await page.waitForFunction((w) => { const v = window.__streamscope!.view(); return v.end - v.start < (w.end - w.start) * 0.3; }, v0);
    await page.keyboard.press('s');
    await page.close();
  });

  it('search finds a kernel and selects it', async () => {
    const page = await openApp(browser, server.url);
    await page.fill('[data-testid="search"]', 'normaliseColumns');
    await page.waitForSelector('[data-testid="details"] [data-field="name"]');
    expect(await page.locator('[data-testid="details"] [data-field="name"]').textContent()).toContain('normaliseColumns');
    await page.close();
  });

  it('the default-stream run shows its finding with the what-if estimate', async () => {
    const page = await openApp(browser, server.url);
    const handles = await page.locator('[data-testid="recording-select"] option').allTextContents();
    await page.selectOption('[data-testid="recording-select"]', { label: handles.find((h) => h.includes('default-stream'))! });
    await page.waitForSelector('[data-testid="finding"]:has-text("legacy default stream")');
    expect(await page.locator('[data-testid="finding"]').first().textContent()).toMatch(/what if fixed: .* → /);
    await page.close();
  });
});

describe('stats in Chromium', () => {
  it('kernel, copy and stream tables with the stored numbers, sortable, and the overlap matrix', async () => {
    const page = await openApp(browser, server.url);
    await page.click('[data-testid="tab-stats"]');
    await page.waitForSelector('[data-testid="stats-kernels"] tbody tr');
    const kernelRow = await page.locator('[data-testid="stats-kernels"] tbody tr').first().locator('td').allTextContents();
    const k = rows<{ name: string; n: number }>(concurrent, 'SELECT s.value AS name, count(*) AS n FROM kernels k JOIN strings s ON s.id = k.name_id GROUP BY 1')[0]!;
    expect(kernelRow[0]).toBe(k.name);
    expect(kernelRow[1]).toBe(String(k.n));
    const streamsBefore = await page.locator('[data-testid="stats-streams"] tbody tr td:first-child').allTextContents();
    await page.click('[data-testid="stats-streams"] th:has-text("stream")');
    const streamsAfter = await page.locator('[data-testid="stats-streams"] tbody tr td:first-child').allTextContents();
    expect([...streamsAfter].sort()).toEqual([...streamsBefore].sort());
    expect(streamsAfter).toEqual([...streamsAfter].sort((a, b) => Number(b) - Number(a)));
    expect(await page.locator('[data-testid="stats-matrix"] tbody tr').count()).toBe(streamsAfter.length);
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
      const banner = await page.locator('[data-testid="error-banner"]').textContent();
      expect(banner).toContain(bad);
      expect(banner).toMatch(/not a SQLite database/);
      expect(await page.locator('[data-testid^="row-stream:"]').count()).toBeGreaterThan(0);
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
    expect((await fetch(`${base}api/openRecording`, { method: 'POST', headers: { 'x-streamscope-token': server.token }, body: '{"args":["/etc/passwd"]}' })).status).toBe(403);
    expect((await fetch(`${base}..%2f..%2fpackage.json`)).status).not.toBe(200);
  });
});
