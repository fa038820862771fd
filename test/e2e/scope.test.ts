/// <reference lib="dom" />
// The analysis scope in Debian's Chromium against the real server, on a real
// PyTorch recording (torch_prefetch: NVTX ranges 'step' × 12 with 'prefetch'
// and 'compute' inside; about 300 ms of start-up before them): the start-up
// band where scopeInfo() puts it, the findings of the steady state by
// default and of the whole recording when picked, a range dragged on the
// ruler analysed as exactly that window (findings and stats as the API
// answers them for it, another range another answer, a late answer never
// shown over a newer one), the iterations row and a click on an instance;
// and the compare view against the same program with pinned buffers, both
// sides on one scope.
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DiffSummary, Finding, Iterations, RecordingSummary, Scope, ScopeInfo, StatsResponse } from '../../profiler/contract/api.ts';
import type { RunningServer } from '../../profiler/serve/server.ts';
import { formatDuration } from '../../profiler/contract/time.ts';
import { parseScope, scopeKey } from '../../renderer/src/scope/scope.ts';
import { callApi, launch, openApp, serve, settled } from './browser.ts';

const fixtures = path.resolve(import.meta.dirname, '../fixtures/recordings');
const torch = path.join(fixtures, 'torch_prefetch.sqlite');
/** The same program with its host buffers pinned. */
const pinned = path.join(fixtures, 'torch_prefetch-pinned.sqlite');

let browser: Browser;
let server: RunningServer;
let id: string;
let pinnedId: string;
beforeAll(async () => {
  [browser, server] = await Promise.all([launch(), serve([torch, pinned])]);
  const list = await callApi<{ recordingId: string; path: string }[]>(server, 'listRecordings');
  [id, pinnedId] = [torch, pinned].map((f) => list.find((r) => r.path === f)!.recordingId) as [string, string];
}, 120_000);
afterAll(async () => {
  await server?.close();
  await browser?.close();
});

const api = <T>(method: string, ...args: unknown[]) => callApi<T>(server, method, ...args);
const app = (hash = '') => openApp(browser, `${server.url}#rec=${id}${hash}`);

/** What the findings panel lists, as it prints each finding. */
interface Shown {
  kind: string;
  title: string;
  cost: string;
}
const asShown = (fs: Finding[]): Shown[] => fs.map((f) => ({ kind: f.kind, title: f.title, cost: formatDuration(f.costNs) }));

/** Waits until the findings panel shows the answer for `key` (nothing newer pending), and reads it. */
async function panelFindings(page: Page, key: string): Promise<Shown[]> {
  await page.waitForSelector(`[data-testid="findings"][data-scope="${key}"][data-pending="false"]`);
  return page.locator('[data-testid="findings"] .finding').evaluateAll((els) =>
    els.map((e) => ({
      kind: e.getAttribute('data-kind') ?? '',
      title: e.querySelector('.title')?.textContent ?? '',
      cost: e.querySelector('.cost')?.textContent ?? '',
    })),
  );
}

/** The scope whose answer the findings panel shows (once a window, from the drag: its key is read back). */
const panelScope = (page: Page) => page.locator('[data-testid="findings"]').getAttribute('data-scope');

/** Drags on the ruler from one fraction of its width to another; returns the times under the pointer at both ends. */
async function dragRuler(page: Page, from: number, to: number): Promise<[number, number]> {
  const r = (await page.locator('[data-testid="ruler"]').boundingBox())!;
  const v = await page.evaluate(() => window.__streamscope!.view());
  await page.mouse.move(r.x + r.width * from, r.y + 12);
  await page.mouse.down();
  await page.mouse.move(r.x + r.width * to, r.y + 12, { steps: 6 });
  await page.mouse.up();
  const at = (f: number) => v.start + f * (v.end - v.start);
  return [at(from), at(to)];
}

describe('scope in Chromium (torch_prefetch)', () => {
  it('draws start-up where scopeInfo puts it; the steady state by default, the whole recording when picked', async () => {
    const steady = await api<ScopeInfo>('scopeInfo', id, { kind: 'steady-state' });
    const startup = steady.startup!;
    // The fixture's start-up: CUDA initialisation from ~25 ms, modules loaded until a third of a second or so
    // (the band is checked against the numbers the API gives, whatever they are exactly).
    expect(startup.startNs).toBeGreaterThan(10e6);
    expect(startup.startNs).toBeLessThan(50e6);
    expect(startup.endNs).toBeGreaterThan(250e6);
    expect(startup.endNs).toBeLessThan(500e6);

    // The whole recording in view, start-up and all (the first view would frame the steady state's GPU work).
    const rec = await api<RecordingSummary>('summary', id);
    const page = await app(`&start=${rec.startNs}&end=${rec.endNs}`);
    // The ruler is a canvas: the band as it drew it (the test hooks).
    await page.waitForFunction(() => !!window.__streamscope?.rulers()[0]?.startup);
    const band = (await page.evaluate(() => window.__streamscope!.rulers()[0]!.startup))!;
    expect(band.startNs).toBe(startup.startNs);
    expect(band.endNs).toBe(startup.endNs);
    // Drawn across the ruler from start to end of start-up, at the view's scale.
    const ruler = (await page.locator('[data-testid="ruler"]').boundingBox())!;
    const v = await page.evaluate(() => window.__streamscope!.view());
    const xOf = (ns: number) => ((ns - v.start) / (v.end - v.start)) * ruler.width;
    expect(Math.abs(band.x0 - Math.max(0, xOf(startup.startNs)))).toBeLessThan(1);
    expect(Math.abs(band.x1 - xOf(startup.endNs))).toBeLessThan(1);
    expect(band.label).toBe(`start-up ${formatDuration(startup.endNs - startup.startNs)}`);
    // Its tooltip: the ruler's title while the pointer is over the band.
    await page.mouse.move(ruler.x + (band.x0 + band.x1) / 2, ruler.y + ruler.height / 2);
    await page.waitForFunction(() => document.querySelector('[data-testid="ruler"]')!.getAttribute('title')!.startsWith('Start-up:'));
    const tip = (await page.locator('[data-testid="ruler"]').getAttribute('title'))!;
    for (const part of startup.spentOn) expect(tip).toContain(`${part.label}: ${formatDuration(part.ns)}`);

    // The steady state's findings, labelled as such; pageable copies first.
    const want = asShown(await api<Finding[]>('findings', id, { kind: 'steady-state' }));
    expect(want[0]!.kind).toBe('pageable-async-copy');
    expect(await panelFindings(page, 'steady')).toEqual(want);
    expect(await page.locator('[data-testid="scope-label"]').textContent()).toBe(steady.label);

    // The whole recording, start-up included: other costs.
    await page.selectOption('[data-testid="findings"] [data-testid="scope-picker"]', 'whole');
    const whole = asShown(await api<Finding[]>('findings', id, { kind: 'whole' }));
    expect(whole).not.toEqual(want);
    expect(await panelFindings(page, 'whole')).toEqual(whole);
    expect(await page.locator('[data-testid="scope-label"]').textContent()).toBe((await api<ScopeInfo>('scopeInfo', id, { kind: 'whole' })).label);
    // The stats follow the same scope.
    await page.click('[data-testid="tab-stats"]');
    await page.waitForSelector('[data-testid="stats-scope"][data-scope="whole"][data-pending="false"]');
    // A reload shows the same scope.
    await page.waitForFunction(() => location.hash.includes('scope=whole') && location.hash.includes('tab=stats'));
    await page.reload();
    await page.waitForSelector('[data-testid="stats-scope"][data-scope="whole"][data-pending="false"]');
    await page.close();
  });

  it('a range dragged on the ruler is analysed as exactly that window; another range gives another answer', async () => {
    const page = await app();
    await panelFindings(page, 'steady');

    // Over the steps after start-up.
    const [a, b] = await dragRuler(page, 0.62, 0.86);
    await page.waitForFunction(() => /^window:/.test(document.querySelector('[data-testid="findings"]')?.getAttribute('data-scope') ?? ''));
    const key1 = (await panelScope(page))!;
    const w1 = parseScope(key1) as Extract<Scope, { kind: 'window' }>;
    expect(w1.kind).toBe('window');
    // The window is where the pointer went (within a pixel of the ruler).
    const nsPerPx = await page.evaluate(() => {
      const v = window.__streamscope!.view();
      return (v.end - v.start) / document.querySelector('[data-testid="ruler"]')!.getBoundingClientRect().width;
    });
    expect(Math.abs(w1.startNs - a)).toBeLessThan(2 * nsPerPx);
    expect(Math.abs(w1.endNs - b)).toBeLessThan(2 * nsPerPx);
    const f1 = await api<Finding[]>('findings', id, w1);
    expect(await panelFindings(page, key1)).toEqual(asShown(f1));
    expect(await page.locator('[data-testid="scope-label"]').textContent()).toBe((await api<ScopeInfo>('scopeInfo', id, w1)).label);
    await page.waitForFunction((k) => new URLSearchParams(location.hash.slice(1)).get('scope') === k, key1);

    // The stats of the same window.
    await page.click('[data-testid="tab-stats"]');
    await page.waitForSelector(`[data-testid="stats-scope"][data-scope="${key1}"][data-pending="false"]`);
    const s1 = await api<StatsResponse>('stats', id, w1);
    const launches = s1.kernels.reduce((n, k) => n + k.count, 0);
    expect(await page.locator('[data-testid="stats-view"] h2', { hasText: 'Kernels' }).textContent()).toContain(
      `${s1.kernels.length} distinct, ${launches} launches`,
    );
    expect(await page.locator('[data-testid="stats-kernels"] tbody tr').count()).toBe(s1.kernels.length);
    await page.click('[data-testid="tab-timeline"]');
    await settled(page);

    // Another range, over start-up and the warm-up step: another answer, again the API's for it.
    await dragRuler(page, 0.05, 0.45);
    await page.waitForFunction((k) => {
      const s = document.querySelector('[data-testid="findings"]')?.getAttribute('data-scope') ?? '';
      return /^window:/.test(s) && s !== k;
    }, key1);
    const key2 = (await panelScope(page))!;
    const w2 = parseScope(key2);
    const f2 = await api<Finding[]>('findings', id, w2);
    expect(asShown(f2)).not.toEqual(asShown(f1));
    expect(await panelFindings(page, key2)).toEqual(asShown(f2));

    // Reloaded: the same window, analysed and drawn as the selection.
    await page.waitForFunction((k) => new URLSearchParams(location.hash.slice(1)).get('scope') === k, key2);
    await page.reload();
    expect(await panelFindings(page, key2)).toEqual(asShown(f2));
    await page.waitForSelector('[data-testid="range-duration"]');

    // Clearing the range (Esc) goes back to the scope picked before it.
    await page.keyboard.press('Escape');
    await panelFindings(page, 'steady');
    await page.close();
  });

  it('an answer that arrives late never replaces a newer one', async () => {
    const page = await app();
    await panelFindings(page, 'steady');
    // The first window's findings are held back 3 s on their way to the server.
    let held: string | null = null;
    await page.route('**/api/findings', async (route) => {
      const scope = (route.request().postDataJSON() as { args: [string, Scope] }).args[1];
      if (scope.kind === 'window' && held === null) {
        held = scopeKey(scope);
        await new Promise((r) => setTimeout(r, 3000));
      }
      await route.continue();
    });
    await dragRuler(page, 0.6, 0.8);
    await page.waitForFunction(() => document.querySelector('[data-testid="findings"]')?.getAttribute('data-pending') === 'true');
    // Past the debounce: the first window's request is on its way (held); a second selection follows.
    await page.waitForTimeout(400);
    expect(held).not.toBeNull();
    const late = page.waitForResponse(
      (r) =>
        r.url().endsWith('/api/findings') &&
        (r.request().postDataJSON() as { args: [string, Scope] }).args[1].kind === 'window' &&
        scopeKey((r.request().postDataJSON() as { args: [string, Scope] }).args[1]) === held,
    );
    await dragRuler(page, 0.7, 0.9);
    // The answer for the final selection: the drag's intermediate windows
    // may be answered first (each then is superseded, so pending again).
    await page.waitForFunction((k) => {
      const panel = document.querySelector('[data-testid="findings"]');
      const s = panel?.getAttribute('data-scope') ?? '';
      return /^window:/.test(s) && s !== k && panel?.getAttribute('data-pending') !== 'true';
    }, held);
    // Settled: the same scope shown, answered, twice over a debounce and more
    // (a loaded machine may deliver the drag's last move late).
    let newer = (await panelScope(page))!;
    for (;;) {
      await page.waitForTimeout(400);
      const now = (await panelScope(page))!;
      const pending = await page.evaluate(() => document.querySelector('[data-testid="findings"]')?.getAttribute('data-pending') === 'true');
      if (now === newer && !pending) break;
      newer = now;
    }
    expect(newer).not.toBe(held);
    // The held answer lands after the newer one: it is dropped.
    await late;
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    expect(await panelScope(page)).toBe(newer);
    expect(await panelFindings(page, newer)).toEqual(asShown(await api<Finding[]>('findings', id, parseScope(newer))));
    await page.close();
  });

  it("the Stats tab's iterations table: each instance's top finding, asked by the tab itself", async () => {
    const it12 = (await api<Iterations | null>('iterations', id, null, true))!;
    const page = await app();
    await page.click('[data-testid="tab-stats"]');
    await page.waitForSelector('[data-testid="stats-iterations"]');
    // Filled in when the second answer lands; none is left estimating.
    await page.waitForFunction(() => !document.querySelector('[data-testid="iteration-finding-pending"]') && !!document.querySelector('.it-finding'));
    const shown = await page.locator('[data-testid="stats-iterations"] .it-finding').count();
    expect(shown).toBe(it12.rows.filter((r) => r.topFinding !== null).length);
    await page.close();
  });

  it('the iterations row: 12 boxes, #1 warm-up; a click on #3 makes it the scope and shows it whole', async () => {
    const it12 = (await api<Iterations | null>('iterations', id, null, true))!;
    expect(it12.name).toBe('step');
    expect(it12.rows.length).toBe(12);
    // The timeline's row is asked without each instance's top finding (the range's whole diagnosis): the same rows.
    const rowsAlone = (await api<Iterations | null>('iterations', id, null, false))!;
    expect(rowsAlone.findings).toBe(false);
    expect(rowsAlone.rows.every((r) => r.topFinding === null)).toBe(true);
    expect(rowsAlone.rows).toEqual(it12.rows.map((r) => ({ ...r, topFinding: null })));
    expect(it12.findings).toBe(true);
    expect(it12.rows.some((r) => r.topFinding !== null)).toBe(true);
    const page = await app();
    await page.waitForFunction(() => (window.__streamscope!.iterationBoxes()?.length ?? 0) > 0);
    expect(await page.locator('[data-testid="row-iterations"]').textContent()).toContain("'step' × 12");
    const boxes = (await page.evaluate(() => window.__streamscope!.iterationBoxes()))!;
    expect(boxes.map((b) => b.instance)).toEqual(it12.rows.map((r) => r.instance));
    expect(boxes.map((b) => [b.warmUp, b.outlier])).toEqual(it12.rows.map((r) => [r.warmUp, r.outlier]));
    expect(boxes[0]!.warmUp).toBe(true);
    expect(boxes.slice(1).some((b) => b.warmUp)).toBe(false);
    // Every box drawn, in the order of the instances.
    for (const b of boxes) expect(b.rect).not.toBeNull();
    for (let k = 1; k < boxes.length; k++) expect(boxes[k]!.rect!.x).toBeGreaterThanOrEqual(boxes[k - 1]!.rect!.x);

    // Hovering #1 says why it is flagged.
    const r1 = boxes[0]!.rect!;
    await page.mouse.move(r1.x + r1.w / 2, r1.y + r1.h / 2);
    await page.waitForSelector('[data-testid="tooltip"]');
    expect(await page.locator('[data-testid="tooltip"]').textContent()).toMatch(/step #1 of 12.*warm-up/);

    const r3 = boxes[2]!.rect!;
    await page.mouse.click(r3.x + r3.w / 2, r3.y + r3.h / 2);
    const want = asShown(await api<Finding[]>('findings', id, { kind: 'range', name: 'step', instance: 3 }));
    expect(await panelFindings(page, 'range:step#3')).toEqual(want);
    expect(await page.locator('[data-testid="scope-label"]').textContent()).toBe("NVTX range 'step' #3 of 12");
    expect(await page.locator('[data-testid="findings"] [data-testid="scope-picker"]').inputValue()).toBe('range:step#3');
    // The view: the instance's GPU span, whole, with a small margin.
    const third = it12.rows[2]!;
    const v = await page.evaluate(() => window.__streamscope!.view());
    expect(v.start).toBeLessThan(third.gpuStartNs!);
    expect(v.end).toBeGreaterThan(third.gpuEndNs!);
    expect(v.end - v.start).toBeLessThan((third.gpuEndNs! - third.gpuStartNs!) * 1.2);
    // Reloaded: the same scope.
    await page.waitForFunction(() => location.hash.includes('scope=range%3Astep%233'));
    await page.reload();
    expect(await panelFindings(page, 'range:step#3')).toEqual(want);
    await page.close();
  });

  it('the compare view diffs both recordings on one scope: step #3 of each, where pinning fixed the pageable copy', async () => {
    const page = await browser.newPage({ viewport: { width: 1600, height: 900 } });
    await page.goto(`${server.url}#rec=${id}&tab=compare&cmp=${id},${pinnedId}`);
    const statuses = () =>
      page
        .locator('[data-testid="diff-findings"] [data-kind]')
        .evaluateAll((els) => els.map((e) => `${e.getAttribute('data-kind')}:${e.getAttribute('data-testid')!.replace('finding-', '')}`));
    const expected = async (scope: Scope) => {
      const d = await api<DiffSummary>('compare', id, pinnedId, scope);
      return ['fixed', 'new', 'changed', 'unchanged'].flatMap((st) => d.findings.filter((f) => f.status === st).map((f) => `${f.kind}:${f.status}`));
    };
    // The steady state by default: over the whole run, pageable copies remain
    // in both, only their host-to-device ones gone (the copies changed).
    await page.waitForSelector('[data-testid="compare-side"][data-scope="steady"]');
    const steady = await expected({ kind: 'steady-state' });
    expect(steady).toContain('pageable-async-copy:changed');
    expect(await statuses()).toEqual(steady);

    await page.selectOption('[data-testid="compare-scope"] [data-testid="scope-picker"]', 'range:step');
    await page.locator('[data-testid="compare-scope"] [data-testid="scope-instance"]').fill('3');
    await page.waitForSelector('[data-testid="compare-side"][data-scope="range:step#3"]');
    const third = await expected({ kind: 'range', name: 'step', instance: 3 });
    expect(third).toContain('pageable-async-copy:fixed');
    expect(await statuses()).toEqual(third);
    await page.waitForFunction(() => new URLSearchParams(location.hash.slice(1)).get('cscope') === 'range:step#3');
    // Each lane has its start-up band and its iterations row.
    await page.waitForFunction(() => window.__streamscope!.rulers().filter((r) => r?.startup).length === 2);
    expect(await page.locator('[data-testid="compare-lane"] [data-testid="row-iterations"]').count()).toBe(2);
    await page.close();
  });
});
