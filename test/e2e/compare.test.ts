/// <reference lib="dom" />
// The compare view in Debian's Chromium against the real server and the
// H100 recordings of one workload in two scenarios (default-stream and
// concurrent): what the diff summary shows is checked against the diff
// computed here from the files; alignment, offsets and linked zoom are
// checked through the views the page reports, in recording time.
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyze } from '../../profiler/analysis/diagnosis/analyze.ts';
import { diffRecordings } from '../../profiler/compare/diff.ts';
import type { DiffSummary } from '../../profiler/contract/diff.ts';
import type { RunningServer } from '../../profiler/serve/server.ts';
import { formatDuration } from '../../profiler/contract/time.ts';
import { openRecording } from '../../profiler/store/database.ts';
import { launch, serve, settled, waitForHash } from './browser.ts';

const fixtures = path.resolve(import.meta.dirname, '../fixtures/recordings');
const before = path.join(fixtures, 'normalise-default-stream.sqlite');
const after = path.join(fixtures, 'normalise-concurrent.sqlite');

let browser: Browser;
let server: RunningServer;
let ids: string[];
let expected: DiffSummary;
beforeAll(async () => {
  [browser, server] = await Promise.all([launch(), serve([before, after])]);
  const r = await fetch(`${server.url.split('?')[0]}api/listRecordings`, { method: 'POST', headers: { 'x-streamscope-token': server.token }, body: '{}' });
  const list = (await r.json()) as { recordingId: string; path: string }[];
  ids = [before, after].map((f) => list.find((h) => h.path === f)!.recordingId);
  const load = (f: string) => {
    const db = openRecording(f, { readonly: true });
    try {
      return analyze(db);
    } finally {
      db.close();
    }
  };
  expected = diffRecordings(before, load(before), after, load(after));
}, 120_000);
afterAll(async () => {
  await server?.close();
  await browser?.close();
});

/** Opens the compare view (by its URL) and waits until both lanes have drawn their data. */
async function openCompare(hash = ''): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1600, height: 900 } });
  await page.goto(`${server.url}#tab=compare&cmp=${ids.join(',')}${hash}`);
  await page.waitForSelector('[data-testid="diff-gpu-span"]');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="compare-lane"]').length === 2 && (window.__streamscope?.views().length ?? 0) === 2);
  await settled(page);
  return page;
}

const views = (page: Page) => page.evaluate(() => window.__streamscope!.views());
// Each lane's ruler labels as drawn (the rulers are canvases; the hooks list them top first, as the lanes).
const rulerTexts = (page: Page) =>
  page.evaluate(() =>
    window.__streamscope!.rulers().map((r) =>
      r!.ticks
        .filter((t) => t.shown)
        .map((t) => t.label)
        .join(' '),
    ),
  );

/** The first GPU operation of a recording (ns since its origin), from SQLite. */
function firstGpu(file: string): number {
  const db = openRecording(file, { readonly: true });
  try {
    return (
      db
        .prepare(
          'SELECT min(s) AS s FROM (SELECT min(start_ns) s FROM kernels UNION ALL SELECT min(start_ns) FROM memcpys UNION ALL SELECT min(start_ns) FROM memsets)',
        )
        .get() as { s: number }
    ).s;
  } finally {
    db.close();
  }
}

describe('compare view in Chromium', () => {
  it('stacks both recordings and shows the diff summary: wall-time gain, overlap change, default-stream finding fixed', async () => {
    const page = await openCompare();
    const lanes = page.locator('[data-testid="compare-lane"]');
    expect(await lanes.nth(0).locator('.cmp-lane-head').textContent()).toContain('normalise-default-stream.sqlite');
    expect(await lanes.nth(1).locator('.cmp-lane-head').textContent()).toContain('normalise-concurrent.sqlite');
    // Each lane has its own stream rows: the default-stream run's legacy stream 7 only in the first.
    expect(await lanes.nth(0).locator('[data-testid^="row-stream:"]').count()).toBe(9);
    expect(await lanes.nth(1).locator('[data-testid^="row-stream:"]').count()).toBe(8);

    const pctOf = (r: number | null) => `${r! > 0 ? '+' : ''}${(r! * 100).toFixed(Math.abs(r!) < 0.1 ? 1 : 0)}%`;
    const wall = await page.locator('[data-testid="diff-wall"]').textContent();
    expect(expected.durationNs.delta!).toBeLessThan(0); // the concurrent run finished sooner
    expect(wall).toContain(pctOf(expected.durationNs.relative));
    expect(await page.locator('[data-testid="diff-wall"]').getAttribute('class')).toContain('good');
    const span = await page.locator('[data-testid="diff-gpu-span"]').textContent();
    expect(span).toContain(pctOf(expected.gpuSpanNs.relative));

    const overlap = expected.devices[0]!.overlap.all;
    expect(overlap.b!).toBeGreaterThan(overlap.a!);
    const shown = await page.locator('[data-testid="diff-overlap-0"]').textContent();
    expect(shown).toContain(`${overlap.a!.toFixed(2)}× → ${overlap.b!.toFixed(2)}×`);
    expect(await page.locator('[data-testid="diff-overlap-0"]').getAttribute('class')).toContain('good');

    const fixed = page.locator('[data-testid="finding-fixed"]');
    expect(await fixed.count()).toBe(expected.findings.filter((f) => f.status === 'fixed' && !f.limit).length);
    expect(await fixed.first().getAttribute('data-kind')).toBe('legacy-default-stream');
    expect(await fixed.first().textContent()).toMatch(/legacy default stream/);
    // Kernels matched by name, one row per name in either recording.
    expect(await page.locator('[data-testid="diff-kernels"] tbody tr').count()).toBe(expected.kernels.length);
    await page.close();
  });

  it("the copy engines' waits are limits, not new regressions; each finding's cost is its own", async () => {
    const page = await openCompare();
    const limits = expected.findings.filter((f) => f.limit);
    expect(limits.map((f) => [f.kind, f.status])).toEqual([
      ['copy-engine-queue', 'new'],
      ['copy-engine-queue', 'new'],
    ]);
    const shown = page.locator('[data-testid="finding-limit"]');
    expect(await shown.count()).toBe(2);
    expect(await page.locator('[data-testid="finding-new"]').count()).toBe(0);
    expect(await page.locator('[data-testid="diff-findings"]').locator('xpath=..').locator('h2 .count').textContent()).toBe(
      '1 fixed · 0 new · 0 changed · 0 unchanged · 2 limits',
    );
    for (let i = 0; i < 2; i++) {
      const row = shown.nth(i);
      expect(await row.getAttribute('data-kind')).toBe('copy-engine-queue');
      expect(await row.getAttribute('class')).not.toMatch(/df-new/);
      expect(await row.locator('.df-status').textContent()).toBe('limit');
      // In no colour: the rule for new findings' red is not applied.
      expect(await row.evaluate((el) => getComputedStyle(el).backgroundColor)).toBe('rgba(0, 0, 0, 0)');
      expect(await row.locator('[data-testid="finding-cost"] .chg').getAttribute('class')).toBe('chg ');
    }
    // Each row's cost is its own finding's, as its title states it; '–' where it is not.
    const rows = page.locator('[data-testid="diff-findings"] li');
    expect(await rows.count()).toBe(expected.findings.length);
    for (let i = 0; i < expected.findings.length; i++) {
      const title = (await rows.nth(i).locator('.df-title').textContent())!;
      const f = expected.findings.find((x) => title.startsWith((x.titleB ?? x.titleA)!))!;
      const cost = (await rows.nth(i).locator('[data-testid="finding-cost"]').textContent())!;
      const side = (v: number | null, title: string | null) => (title === null ? '–' : formatDuration(v!));
      expect(cost).toMatch(new RegExp(`^${side(f.costNs.a, f.titleA)} → ${side(f.costNs.b, f.titleB)}`));
      if (f.kind === 'copy-engine-queue') expect(title).toContain(formatDuration(f.costNs.b!));
    }
    await page.close();
  });

  it('aligns both at their first GPU operation: t = 0 on both rulers, one axis', async () => {
    const page = await openCompare();
    const [va, vb] = await views(page);
    const [a0, b0] = [firstGpu(before), firstGpu(after)];
    // In recording time the two views are the same aligned window shifted by each anchor.
    expect(va!.start - a0).toBeCloseTo(vb!.start - b0, 0);
    expect(va!.end - va!.start).toBeCloseTo(vb!.end - vb!.start, 0);
    // The first view frames the GPU work: it starts just before the anchor.
    expect(va!.start).toBeLessThan(a0);
    expect(va!.end).toBeGreaterThan(a0);
    const [ra, rb] = await rulerTexts(page);
    expect(ra).toBe(rb);
    expect(ra).toMatch(/µs/);
    await page.close();
  });

  it('an offset shifts only the other recording; a kernel alignment puts that kernel at t = 0', async () => {
    const page = await openCompare();
    const [va0, vb0] = await views(page);
    await page.locator('[data-testid="compare-offset"]').fill('250');
    await page.waitForFunction((b) => window.__streamscope!.views()[1]!.start !== b, vb0!.start);
    const [va1, vb1] = await views(page);
    expect(va1).toEqual(va0);
    expect(vb1!.start - vb0!.start).toBeCloseTo(250_000, 0);

    await page.locator('[data-testid="compare-offset"]').fill('0');
    await page.selectOption('[data-testid="align-by"]', 'kernel');
    await page.locator('[data-testid="align-occurrence"]').fill('3');
    await page.locator('[data-testid="align-name"]').fill('normaliseColumns');
    await page.locator('[data-testid="align-name"]').press('Enter');
    await waitForHash(page, /align=kernel%3A3%3AnormaliseColumns|align=kernel:3:normaliseColumns/);
    await settled(page);
    const third = (file: string) => {
      const db = openRecording(file, { readonly: true });
      try {
        return (db.prepare('SELECT start_ns AS s FROM kernels ORDER BY start_ns LIMIT 1 OFFSET 2').get() as { s: number }).s;
      } finally {
        db.close();
      }
    };
    await page.waitForFunction(
      ([a, b]) => {
        const [x, y] = window.__streamscope!.views();
        return Math.abs(x!.start - a! - (y!.start - b!)) < 1;
      },
      [third(before), third(after)],
    );
    const lane = page.locator('[data-testid="lane-shift"]').first();
    expect(await lane.textContent()).toMatch(/t = 0 at \d/);
    await page.close();
  });

  it('linked zoom moves both timelines; unlinked, only the one zoomed', async () => {
    const page = await openCompare();
    const lanes = page.locator('[data-testid="compare-lane"]');
    const [a0, b0] = await views(page);
    await lanes.nth(0).locator('[data-testid="zoom-in"]').click();
    await page.waitForFunction((w) => {
      const v = window.__streamscope!.views()[0]!;
      return v.end - v.start < w;
    }, a0!.end - a0!.start);
    const [a1, b1] = await views(page);
    expect(a1!.end - a1!.start).toBeCloseTo((a0!.end - a0!.start) / 2, 0);
    expect(b1!.end - b1!.start).toBeCloseTo((b0!.end - b0!.start) / 2, 0);

    await page.locator('[data-testid="compare-linked"]').uncheck();
    await lanes.nth(1).locator('[data-testid="zoom-in"]').click();
    await page.waitForFunction((w) => {
      const v = window.__streamscope!.views()[1]!;
      return v.end - v.start < w;
    }, b1!.end - b1!.start);
    const [a2, b2] = await views(page);
    expect(a2).toEqual(a1);
    expect(b2!.end - b2!.start).toBeCloseTo((b1!.end - b1!.start) / 2, 0);
    await page.close();
  });

  it('the URL reopens the same compare view (alignment, offset, range)', async () => {
    const page = await openCompare('&offs=0,125000');
    await waitForHash(page, /start=/);
    const hash = await page.evaluate(() => location.hash);
    expect(hash).toContain('tab=compare');
    expect(hash).toContain('offs=0%2C125000');
    const [va, vb] = await views(page);
    const again = await browser.newPage({ viewport: { width: 1600, height: 900 } });
    await again.goto(`${server.url}${hash}`);
    await again.waitForFunction(() => (window.__streamscope?.views().length ?? 0) === 2);
    await settled(again);
    const [wa, wb] = await views(again);
    expect(wa!.start).toBeCloseTo(va!.start, -1);
    expect(wb!.start).toBeCloseTo(vb!.start, -1);
    expect(await again.locator('[data-testid="compare-offset"]').inputValue()).toBe('125');
    await page.close();
    await again.close();
  });
});
