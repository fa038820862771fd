/// <reference lib="dom" />
// The dependency view in Debian's Chromium against the real server: select
// a kernel of the runner's events scenario (an H100 recording) and the
// arrows drawn end on the operations SQL names — its launch call, the copy
// its cudaStreamWaitEvent waited for (labelled with the wait time), the
// copy back that waited for it —, its critical chain is highlighted back to
// a host call, and the spans the waits held are hatched on the streams.
// PyTorch's wait_stream is drawn the same way. What is drawn is read
// through the page's test hook (window.__streamscope.dependencies(), the
// geometry the canvas was drawn with) and the canvas's own pixels.
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatDuration } from '../../profiler/contract/time.ts';
import type { RunningServer } from '../../profiler/serve/server.ts';
import { heldBy, sqlEventWaits, sqlOps, type SqlOp } from '../helpers/event-waits.ts';
import { callApi, launch, openApp, serve, settled } from './browser.ts';

const fixtures = path.resolve(import.meta.dirname, '../fixtures/recordings');
const events = path.join(fixtures, 'matmul-events.sqlite');
const torch = path.join(fixtures, 'torch_streams.sqlite');

let browser: Browser;
let server: RunningServer;
let ids: Record<string, string>;
beforeAll(async () => {
  [browser, server] = await Promise.all([launch(), serve([events, torch])]);
  const list = await callApi<{ recordingId: string; name: string }[]>(server, 'listRecordings');
  ids = Object.fromEntries(list.map((r) => [r.name, r.recordingId]));
}, 120_000);
afterAll(async () => {
  await server?.close();
  await browser?.close();
});

type Drawn = NonNullable<ReturnType<NonNullable<Window['__streamscope']>['dependencies']>>;
type Rect = { x: number; y: number; w: number; h: number };

/** Each event wait of a recording from SQL: the awaited and the waiting operation, with the wait the definition gives. */
function waitsOf(file: string): { from: SqlOp; to: SqlOp; ready: number; waitNs: number; launch: number }[] {
  const db = new Database(file, { readonly: true });
  try {
    const ops = sqlOps(db);
    return sqlEventWaits(db)
      .filter((p) => p.awaited && p.waiting)
      .map((p) => {
        const from = ops.get(p.awaited!)!;
        const to = ops.get(p.waiting!)!;
        const launch = db
          .prepare(
            `SELECT c.id FROM api_calls c JOIN contexts x ON x.pid = c.pid JOIN ${to.t} o ON o.context_id = x.id AND o.correlation_id = c.correlation_id
             WHERE o.id = ? ORDER BY c.start_ns LIMIT 1`,
          )
          .pluck()
          .get(to.id) as number;
        return { from, to, launch, ...heldBy(ops, from, to) };
      });
  } finally {
    db.close();
  }
}

const at = (file: string, start: number, end: number) => `${server.url}#rec=${ids[path.basename(file)]}&start=${Math.round(start)}&end=${Math.round(end)}`;

async function select(page: Page, table: string, id: number): Promise<Drawn> {
  await page.waitForFunction(([t, i]) => window.__streamscope!.itemRect(t as string, i as number) !== null, [table, id] as const);
  const r = (await page.evaluate(([t, i]) => window.__streamscope!.itemRect(t as string, i as number), [table, id] as const))!;
  await page.mouse.click(r.x + r.w / 2, r.y + r.h / 2);
  // The dependencies come from the analysis thread, after the details: wait for the event arrows.
  await page.waitForFunction(
    ([t, i]) =>
      window
        .__streamscope!.dependencies()
        ?.arrows.some((a) => a.kind === 'event' && (`${a.to.table}:${a.to.id}` === `${t}:${i}` || `${a.from.table}:${a.from.id}` === `${t}:${i}`)),
    [table, id] as const,
  );
  await settled(page);
  return (await page.evaluate(() => window.__streamscope!.dependencies()))!;
}

const rectOf = (page: Page, table: string, id: number) =>
  page.evaluate(([t, i]) => window.__streamscope!.itemRect(t as string, i as number), [table, id] as const);
const near = (a: Rect, b: Rect) => {
  for (const k of ['x', 'y', 'w', 'h'] as const) expect(Math.abs(a[k] - b[k]), k).toBeLessThan(1);
};
const refOf = (o: SqlOp) => ({ table: o.t, id: o.id });

/** An arrow's end is where the operation is drawn: its own box where loaded one by one, else on its stream's row at its start time. */
async function expectAt(page: Page, r: Rect, o: SqlOp): Promise<void> {
  const drawn = await rectOf(page, o.t, o.id);
  if (drawn) return near(r, drawn);
  const [row, canvas, view] = await page.evaluate(
    (rowId) => [
      document.querySelector(`[data-testid="row-${rowId}"]`)!.getBoundingClientRect().toJSON() as DOMRect,
      document.querySelector('[data-testid="timeline-canvas"]')!.getBoundingClientRect().toJSON() as DOMRect,
      window.__streamscope!.view(),
    ],
    `stream:${o.stream}`,
  );
  expect(r.y).toBeGreaterThan(row.y);
  expect(r.y + r.h).toBeLessThan(row.y + row.height);
  expect(Math.abs(r.x - (canvas.x + ((o.start_ns - view.start) / (view.end - view.start)) * canvas.width))).toBeLessThan(1);
}

/** How many canvas pixels inside a page rectangle have the wait hatch's hue (orange, well above the item colours' red-green balance). */
function hatchPixels(page: Page, r: Rect): Promise<number> {
  return page.evaluate((rect) => {
    const canvas = document.querySelector<HTMLCanvasElement>('[data-testid="timeline-canvas"]')!;
    const c = canvas.getBoundingClientRect();
    const k = canvas.width / c.width;
    const x = Math.round((rect.x - c.left) * k);
    const y = Math.round((rect.y - c.top) * k);
    const img = canvas.getContext('2d')!.getImageData(x, y, Math.max(1, Math.round(rect.w * k)), Math.max(1, Math.round(rect.h * k)));
    let n = 0;
    for (let p = 0; p < img.data.length; p += 4) if (img.data[p]! > 180 && img.data[p + 1]! < 140 && img.data[p + 2]! < 90) n++;
    return n;
  }, r);
}

describe('dependencies drawn on the events scenario (matmul, H100)', () => {
  it('a kernel held by its wait: launch and event arrows between the right operations, the wait time, the chain, the hatched span', async () => {
    const all = waitsOf(events);
    expect(all).toHaveLength(16);
    // The kernel its wait held longest, and the copy back that waited for it.
    const held = all.filter((w) => w.to.t === 'kernels').sort((a, b) => b.waitNs - a.waitNs)[0]!;
    expect(held.waitNs).toBeGreaterThan(10_000);
    const k = held.to;
    const back = all.find((w) => w.from.t === 'kernels' && w.from.id === k.id)!;
    const page = await openApp(browser, at(events, held.from.issued - 20_000, back.to.end_ns + 20_000));
    const drawn = await select(page, 'kernels', k.id);

    // The launch: from its cudaLaunchKernel to the kernel.
    const launchArrow = drawn.arrows.find((a) => a.kind === 'launch')!;
    expect(launchArrow).toMatchObject({ from: { table: 'api_calls', id: held.launch }, to: refOf(k) });
    // What it waited for: the copy the record marked, labelled with the wait time, on the critical chain.
    const waited = drawn.arrows.find((a) => a.kind === 'event' && a.to.id === k.id && a.to.table === 'kernels')!;
    expect(waited).toMatchObject({ from: refOf(held.from), critical: true, label: `waited ${formatDuration(held.waitNs)}` });
    // What waited for it: the copy back on the DtoH stream.
    const waitedBy = drawn.arrows.find((a) => a.kind === 'event' && a.from.id === k.id && a.from.table === 'kernels')!;
    expect(waitedBy).toMatchObject({ to: refOf(back.to), label: `waited ${formatDuration(back.waitNs)}` });
    // Each arrow's ends are where those operations are drawn; an event arrow runs from the awaited end to the waiting start.
    for (const a of [launchArrow, waited, waitedBy]) {
      near(a.fromRect, (await rectOf(page, a.from.table, a.from.id))!);
      near(a.toRect, (await rectOf(page, a.to.table, a.to.id))!);
    }
    expect(Math.abs(waited.start.x - (waited.fromRect.x + waited.fromRect.w))).toBeLessThan(1);
    expect(Math.abs(waited.end.x - waited.toRect.x)).toBeLessThan(1);

    // The critical chain: from the awaited copy back to a host call, each on screen outlined where drawn.
    expect(drawn.chain[0]!.ref).toEqual(refOf(held.from));
    expect(drawn.chain.at(-1)!.ref.table).toBe('api_calls');
    for (const c of drawn.chain.filter((x) => x.rect)) near(c.rect!, (await rectOf(page, c.ref.table, c.ref.id))!);
    const critical = drawn.arrows.filter((a) => a.critical);
    expect(critical.length).toBe(drawn.chain.length);
    expect(critical.at(-1)).toMatchObject({ kind: 'launch' });

    // The hatched span on the kernel's stream: from when it was otherwise ready to the copy's end.
    const span = drawn.waitSpans.find((s) => s.waiting.table === 'kernels' && s.waiting.id === k.id)!;
    expect(span).toMatchObject({ rowId: `stream:${k.stream}`, startNs: held.ready, endNs: held.from.end_ns, awaited: refOf(held.from) });
    const kernelRect = (await rectOf(page, 'kernels', k.id))!;
    expect(Math.abs(span.rect.y - kernelRect.y)).toBeLessThan(1);
    expect(span.rect.x + span.rect.w).toBeLessThanOrEqual(kernelRect.x + 1);
    expect(await hatchPixels(page, span.rect)).toBeGreaterThan(10);
    // Every wait that held its operation in view is hatched (the waits that held nothing are not).
    const view = await page.evaluate(() => window.__streamscope!.view());
    const inView = all.filter((w) => w.waitNs > 0 && w.from.end_ns > view.start && w.ready < view.end);
    expect(drawn.waitSpans.map((s) => `${s.waiting.table}:${s.waiting.id}`).sort()).toEqual(inView.map((w) => `${w.to.t}:${w.to.id}`).sort());

    // The details panel lists them: the awaited copy with the wait, and goes there on a click.
    const row = page.locator('[data-testid="dependency"][data-dir="for"]');
    await expect(row.getAttribute('data-ref')).resolves.toBe(`memcpys:${held.from.id}`);
    await expect(row.textContent()).resolves.toContain(formatDuration(held.waitNs));
    await row.click();
    await page.waitForFunction((id) => document.querySelector('[data-testid="details"] [data-field="id"]')?.textContent === String(id), held.from.id);
    // The copy now selected: the kernel is what waited for it.
    await page.waitForFunction(
      (id) => window.__streamscope!.dependencies()?.arrows.some((a) => a.kind === 'event' && a.to.table === 'kernels' && a.to.id === id),
      k.id,
    );
    await page.close();
  });
});

describe("frameworks' cross-stream waits drawn the same way", () => {
  it("PyTorch's wait_stream (torch_streams): the copy on a side stream waits for the kernel on the default stream", async () => {
    const w = waitsOf(torch).find((x) => x.from.stream !== x.to.stream)!;
    expect(w).toBeDefined();
    const pad = Math.max(50_000, w.to.end_ns - w.from.start_ns);
    const page = await openApp(browser, at(torch, w.from.start_ns - pad, w.to.end_ns + pad));
    const drawn = await select(page, w.to.t, w.to.id);
    const arrow = drawn.arrows.find((a) => a.kind === 'event')!;
    expect(arrow).toMatchObject({ from: refOf(w.from), to: refOf(w.to), label: `waited ${formatDuration(w.waitNs)}` });
    // The kernel (2 µs among others) is merged into coverage at this zoom: its end is placed by its row and times.
    await expectAt(page, arrow.fromRect, w.from);
    await expectAt(page, arrow.toRect, w.to);
    expect(arrow.fromRect.y).not.toBe(arrow.toRect.y);
    await page.close();
  });
});
