/// <reference lib="dom" />
// A range dragged on the ruler inside one long copy, in Debian's Chromium
// against the real server: the window holds the copy running through it,
// clipped (analysis/scope.ts clipToWindow), so the findings name it and
// the Stats tab lists it — not "Nothing serialized the streams" and empty
// tables, as when a window held only what started in it. The recording is
// runner-pageable's bug (test/fixtures/corpus): its longest copy moves
// 64 MiB from the device to pageable memory in ~50 ms.
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Finding, Scope, StatsResponse } from '../../profiler/contract/api.ts';
import type { RunningServer } from '../../profiler/serve/server.ts';
import { formatDuration } from '../../profiler/contract/time.ts';
import { parseScope } from '../../renderer/src/scope/scope.ts';
import { callApi, launch, openApp, serve } from './browser.ts';

const file = path.resolve(import.meta.dirname, '../fixtures/corpus/runner-pageable/bug.sqlite');
const db = new Database(file, { readonly: true });
const copy = db.prepare('SELECT id, start_ns AS start, end_ns AS end FROM memcpys ORDER BY end_ns - start_ns DESC LIMIT 1').get() as {
  id: number;
  start: number;
  end: number;
};
db.close();

let browser: Browser;
let server: RunningServer;
let id: string;
beforeAll(async () => {
  [browser, server] = await Promise.all([launch(), serve([file])]);
  id = (await callApi<{ recordingId: string }[]>(server, 'listRecordings'))[0]!.recordingId;
}, 120_000);
afterAll(async () => {
  await server?.close();
  await browser?.close();
});

describe('a range dragged inside a long copy (runner-pageable)', () => {
  it('is analysed with the copy in it: findings name it, the Stats tab lists it with the time inside the range', async () => {
    // The view: the copy with a fifth of its length either side; the drag from 30% to 70% of the ruler is inside it.
    const pad = (copy.end - copy.start) / 5;
    const page = await openApp(browser, `${server.url}#rec=${id}&start=${Math.round(copy.start - pad)}&end=${Math.round(copy.end + pad)}`);
    await page.waitForSelector('[data-testid="findings"][data-scope="steady"][data-pending="false"]');
    const r = (await page.locator('[data-testid="ruler"]').boundingBox())!;
    await page.mouse.move(r.x + r.width * 0.3, r.y + 12);
    await page.mouse.down();
    await page.mouse.move(r.x + r.width * 0.7, r.y + 12, { steps: 6 });
    await page.mouse.up();
    await page.waitForSelector('[data-testid="findings"][data-scope^="window:"][data-pending="false"]');
    const w = parseScope(await page.locator('[data-testid="findings"]').getAttribute('data-scope')) as Extract<Scope, { kind: 'window' }>;
    expect(w.kind).toBe('window');
    expect(w.startNs).toBeGreaterThan(copy.start);
    expect(w.endNs).toBeLessThan(copy.end);

    // The findings: the pageable copy, as the API answers for this window.
    const findings = await api<Finding[]>('findings', id, w);
    expect(findings[0]).toMatchObject({ kind: 'pageable-async-copy', evidence: { memcpys: [copy.id] } });
    const shown = page.locator('[data-testid="findings"] .finding');
    expect(await shown.count()).toBe(findings.length);
    expect(await shown.first().getAttribute('data-kind')).toBe('pageable-async-copy');
    expect(await shown.first().locator('.cost').textContent()).toBe(formatDuration(findings[0]!.costNs));
    expect(await page.locator('[data-testid="findings"]').textContent()).not.toContain('Nothing serialized the streams');

    // The stats of the same window: the copy, for the time it ran inside it; its stream busy all that time.
    await page.click('[data-testid="tab-stats"]');
    await page.waitForSelector(`[data-testid="stats-scope"][data-scope="window:${w.startNs}..${w.endNs}"][data-pending="false"]`);
    const stats = await api<StatsResponse>('stats', id, w);
    expect(stats.copies).toHaveLength(1);
    expect(stats.copies[0]).toMatchObject({ direction: 'DtoH', dstKind: 'pageable', count: 1, totalNs: w.endNs - w.startNs });
    const rows = page.locator('[data-testid="stats-copies"] tbody tr');
    expect(await rows.count()).toBe(1);
    const cells = await rows.first().locator('td').allTextContents();
    expect(cells.slice(0, 4)).toEqual(['DtoH', 'device', 'pageable', '1']);
    expect(cells[5]).toContain(formatDuration(w.endNs - w.startNs));
    expect(await page.locator('[data-testid="stats-streams"] tbody tr').count()).toBe(1);
    expect(await page.locator('[data-testid="stats-view"] section', { has: page.locator('[data-testid="stats-copies"]') }).textContent()).not.toContain(
      'None in this',
    );
    await page.close();
  });
});

const api = <T>(method: string, ...args: unknown[]) => callApi<T>(server, method, ...args);
