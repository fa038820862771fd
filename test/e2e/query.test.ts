/// <reference lib="dom" />
// The Query tab in Debian's Chromium against the real server (browser mode)
// and real recordings: an example runs and its rows are the console's own
// (profiler/query/sql-console.ts, run here on the same file); a bad query
// shows SQLite's error with the token marked and selected in the editor; a
// refused one says why; a row that names an operation jumps to it on the
// timeline (selected, in view, drawn), for kernels, copies and API calls.
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import { SQL_EXAMPLES, type SqlRows } from '../../profiler/contract/sql.ts';
import type { RunningServer } from '../../profiler/serve/server.ts';
import { SqlConsole } from '../../profiler/query/sql-console.ts';
import { cellText, exactText, resultDecimals } from '../../renderer/src/query/cell-text.ts';
import { callApi, launch, serve, settled } from './browser.ts';

const fixtures = path.resolve(import.meta.dirname, '../fixtures/recordings');
const torch = path.join(fixtures, 'torch_prefetch.sqlite');
const nccl = path.join(fixtures, 'nccl-serial-h200x2.sqlite');

let browser: Browser;
let server: RunningServer;
let ids: Record<string, string>;
beforeAll(async () => {
  [browser, server] = await Promise.all([launch(), serve([torch, nccl])]);
  const list = await callApi<{ recordingId: string; name: string }[]>(server, 'listRecordings');
  ids = Object.fromEntries(list.map((r) => [r.name, r.recordingId]));
}, 120_000);
afterAll(async () => {
  await server?.close();
  await browser?.close();
});

/** The console's own answer on the file, as the test's reference. */
function consoleRows(file: string, query: string): SqlRows {
  const sql = new SqlConsole(file);
  try {
    const r = sql.run(query);
    if (!r.ok) throw new Error(r.message);
    return r;
  } finally {
    sql.close();
  }
}

async function openQueryTab(file: string): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1500, height: 850 } });
  await page.goto(`${server.url}#rec=${ids[path.basename(file)]}&tab=query`);
  await page.waitForSelector('[data-testid="query-view"]');
  return page;
}

async function runQuery(page: Page, query: string): Promise<void> {
  await page.fill('[data-testid="query-text"]', query);
  // Ctrl+Enter in the editor runs it, as the Run button does.
  await page.focus('[data-testid="query-text"]');
  await page.keyboard.press('Control+Enter');
  await page.waitForFunction((q) => {
    const status = document.querySelector('[data-testid="query-status"]')?.textContent ?? '';
    const editor = document.querySelector<HTMLTextAreaElement>('[data-testid="query-text"]');
    return editor?.value === q && status !== 'running…' && !!document.querySelector('[data-testid="query-results"], [data-testid="query-error"]');
  }, query);
}

const cellTexts = (page: Page, row: number) => page.locator('[data-testid="query-results"] tbody tr').nth(row).locator('td').allTextContents();

describe('the Query tab', () => {
  it('runs an example and shows its rows, the operation ids as links', async () => {
    const page = await openQueryTab(nccl);
    const example = SQL_EXAMPLES.find((e) => e.title.startsWith('NCCL'))!;
    await page.selectOption('[data-testid="query-examples"]', String(SQL_EXAMPLES.indexOf(example)));
    await page.waitForSelector('[data-testid="query-results"]');
    expect(await page.inputValue('[data-testid="query-text"]')).toBe(example.sql);
    const want = consoleRows(nccl, example.sql);
    expect(want.rows.length).toBeGreaterThan(10);
    await expect(page.locator('[data-testid="query-row"]').count()).resolves.toBe(want.rows.length);
    expect(await page.locator('[data-testid="query-results"] thead th').allTextContents()).toEqual(want.columns);
    const decimals = resultDecimals(want);
    for (const i of [0, want.rows.length - 1]) expect(await cellTexts(page, i)).toEqual(want.rows[i]!.map((v, c) => cellText(v, decimals[c]!)));
    // Two link columns (nvtx_range_id, kernel_id): a link per row in each.
    await expect(page.locator('[data-testid="query-link"][data-table="kernels"]').count()).resolves.toBe(want.rows.length);
    await expect(page.locator('[data-testid="query-link"][data-table="nvtx_ranges"]').count()).resolves.toBe(want.rows.length);
    expect(await page.textContent('[data-testid="query-status"]')).toMatch(new RegExp(`^${want.rows.length} rows · [\\d.]+ ms$`));
    await page.close();
  });

  it('rounds REAL values for reading, keeps them exact in the tooltip, a copy and the saved CSV and JSON; integers as they are', async () => {
    const page = await openQueryTab(torch);
    const query = 'SELECT name, count(*) AS launches, avg(duration_us) AS mean_us, min(start_ns) AS first_ns FROM kernel_view GROUP BY name ORDER BY 3 DESC';
    await runQuery(page, query);
    const want = consoleRows(torch, query);
    const [mean, first] = [want.columns.indexOf('mean_us'), want.columns.indexOf('first_ns')];
    const exact = want.rows[0]![mean] as number;
    // SQLite's average has every digit of a double; the table shows the column's 6 significant digits.
    expect(String(exact).length).toBeGreaterThan(12);
    const cell = page.locator('[data-testid="query-results"] tbody tr').first().locator('td').nth(mean);
    expect(await cell.textContent()).toBe(exact.toFixed(2));
    expect(await cell.getAttribute('title')).toBe(String(exact));
    // ns since the recording's origin: an integer, shown whole, no tooltip.
    const ns = page.locator('[data-testid="query-results"] tbody tr').first().locator('td').nth(first);
    expect(await ns.textContent()).toBe(String(want.rows[0]![first]));
    expect(await ns.getAttribute('title')).toBeNull();

    // A copy of the first row's cells: every digit, tab-separated.
    const copied = await page.evaluate(() => {
      const tr = document.querySelector('[data-testid="query-results"] tbody tr')!;
      const range = document.createRange();
      range.selectNodeContents(tr);
      getSelection()!.removeAllRanges();
      getSelection()!.addRange(range);
      let text = '';
      document.addEventListener('copy', (e) => (text = e.clipboardData!.getData('text/plain')), { once: true });
      document.execCommand('copy');
      return text;
    });
    expect(copied).toBe(want.rows[0]!.map(exactText).join('\t'));

    // Saved: the same rows, every digit.
    const [csv] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="query-save-csv"]')]);
    expect(csv.suggestedFilename()).toBe('query.csv');
    const lines = fs
      .readFileSync((await csv.path())!, 'utf8')
      .trimEnd()
      .split('\r\n');
    expect(lines).toHaveLength(want.rows.length + 1);
    expect(lines[1]!.split(',').at(-2)).toBe(String(exact));
    const [json] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="query-save-json"]')]);
    expect(JSON.parse(fs.readFileSync((await json.path())!, 'utf8')).rows).toEqual(want.rows);
    await page.close();
  });

  it("shows SQLite's error with the token it names marked, and selected in the editor", async () => {
    const page = await openQueryTab(torch);
    // The editor's selection as each error pointer is committed to the page
    // (a MutationObserver runs at the end of the task that commits): the
    // token must be selected by then, not in an effect that runs later,
    // once the page may be typed into (QueryView.tsx says why).
    await page.evaluate(() => {
      const seen: number[][] = [];
      (window as unknown as { __pointerSelections: number[][] }).__pointerSelections = seen;
      let last = '';
      new MutationObserver(() => {
        const pointer = document.querySelector('[data-testid="query-error-pointer"]');
        const editor = document.querySelector<HTMLTextAreaElement>('[data-testid="query-text"]')!;
        const at = pointer ? `${pointer.getAttribute('data-start')}-${pointer.getAttribute('data-end')}` : '';
        if (at === last) return;
        last = at;
        if (pointer)
          seen.push([Number(pointer.getAttribute('data-start')), Number(pointer.getAttribute('data-end')), editor.selectionStart, editor.selectionEnd]);
      }).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
    });
    const query = 'SELECT name,\n       launches\nFROM kernel_view';
    await runQuery(page, query);
    const error = page.locator('[data-testid="query-error"]');
    expect(await error.getAttribute('data-problem')).toBe('error');
    expect(await error.textContent()).toContain(`${torch}: no such column: launches`);
    const pointer = page.locator('[data-testid="query-error-pointer"]');
    expect(await pointer.locator('mark').textContent()).toBe('launches');
    expect(await pointer.textContent()).toContain('line 2 │        launches');
    const start = query.indexOf('launches');
    expect([await pointer.getAttribute('data-start'), await pointer.getAttribute('data-end')]).toEqual([String(start), String(start + 8)]);
    const selection = await page.$eval('[data-testid="query-text"]', (el) => [
      (el as HTMLTextAreaElement).selectionStart,
      (el as HTMLTextAreaElement).selectionEnd,
    ]);
    expect(selection).toEqual([start, start + 8]);
    await expect(page.locator('[data-testid="query-results"]').count()).resolves.toBe(0);

    // A syntax error, and a statement refused: each says what and where.
    await runQuery(page, 'SELECT * FROMM kernel_view');
    expect(await page.locator('[data-testid="query-error-pointer"] mark').textContent()).toBe('FROMM');
    await runQuery(page, 'DELETE FROM kernels');
    expect(await error.getAttribute('data-problem')).toBe('refused');
    expect(await error.textContent()).toContain('DELETE is refused: the SQL console only reads');
    expect(await page.locator('[data-testid="query-error-pointer"] mark').textContent()).toBe('DELETE');
    const fromm = 'SELECT * '.length;
    expect(await page.evaluate(() => (window as unknown as { __pointerSelections: number[][] }).__pointerSelections)).toEqual([
      [start, start + 8, start, start + 8],
      [fromm, fromm + 5, fromm, fromm + 5],
      [0, 6, 0, 6],
    ]);
    await page.close();
  });

  it('says when the row cap cut a result, and draws its rows a page at a time', async () => {
    const page = await openQueryTab(torch);
    await runQuery(page, 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 12000) SELECT x FROM c');
    expect(await page.textContent('[data-testid="query-truncated"]')).toContain('The first 10,000 rows: the query has more');
    await expect(page.locator('[data-testid="query-row"]').count()).resolves.toBe(1000);
    await page.click('[data-testid="query-more"]');
    await expect(page.locator('[data-testid="query-row"]').count()).resolves.toBe(2000);
    await page.close();
  });

  /** Clicks what names `table` `id` in the results and checks the timeline shows it: selected, its details, in view, drawn. */
  async function expectJump(page: Page, click: () => Promise<void>, table: string, id: number) {
    await click();
    await page.waitForSelector('[data-testid="timeline-canvas"]');
    expect(await page.getAttribute('[data-testid="tab-timeline"]', 'class')).toContain('on');
    await page.waitForFunction((sel) => location.hash.includes(`sel=${encodeURIComponent(sel)}`), `${table}:${id}`);
    await page.waitForFunction((want) => document.querySelector('[data-testid="details"] [data-field="id"]')?.textContent === want, String(id));
    const details = await callApi<{ startNs: number; endNs: number }>(server, 'details', ids[path.basename(torch)], { table, id });
    const view = await page.evaluate(() => window.__streamscope!.view());
    expect(view.start).toBeLessThanOrEqual(details.startNs);
    expect(view.end).toBeGreaterThanOrEqual(details.endNs);
    await settled(page);
    await page.waitForFunction(([t, i]) => window.__streamscope!.itemRect(t as string, i as number) !== null, [table, id] as const);
    const rect = (await page.evaluate(([t, i]) => window.__streamscope!.itemRect(t as string, i as number), [table, id] as const))!;
    const canvas = (await page.locator('[data-testid="timeline-canvas"]').boundingBox())!;
    expect(rect.x + rect.w).toBeGreaterThan(canvas.x);
    expect(rect.x).toBeLessThan(canvas.x + canvas.width);
    expect(rect.y).toBeGreaterThanOrEqual(canvas.y);
    expect(rect.y + rect.h).toBeLessThanOrEqual(canvas.y + canvas.height);
  }

  it('jumps from a result row to its operation on the timeline: a kernel, a copy, an API call', async () => {
    const page = await openQueryTab(torch);
    const kernels = 'SELECT kernel_id, name, duration_us FROM kernel_view ORDER BY duration_us DESC LIMIT 5';
    await runQuery(page, kernels);
    const kernel = consoleRows(torch, kernels).rows[2]![0] as number;
    // A click anywhere on the row.
    await expectJump(page, () => page.locator('[data-testid="query-row"]').nth(2).locator('td').nth(1).click(), 'kernels', kernel);

    await page.click('[data-testid="tab-query"]');
    const copies = "SELECT memcpy_id, kind, src_kind, bytes FROM copy_view WHERE src_kind = 'pageable' ORDER BY bytes DESC LIMIT 3";
    await runQuery(page, copies);
    const copy = consoleRows(torch, copies).rows[0]![0] as number;
    await expectJump(page, () => page.click(`[data-testid="query-link"][data-table="memcpys"][data-id="${copy}"]`), 'memcpys', copy);

    // The query tab kept its text and answer meanwhile.
    await page.click('[data-testid="tab-query"]');
    expect(await page.inputValue('[data-testid="query-text"]')).toBe(copies);
    await expect(page.locator('[data-testid="query-row"]').count()).resolves.toBe(3);
    const calls = "SELECT api_call_id, name, duration_us FROM api_view WHERE name = 'cudaStreamSynchronize' ORDER BY duration_us DESC LIMIT 1";
    await runQuery(page, calls);
    const call = consoleRows(torch, calls).rows[0]![0] as number;
    await expectJump(page, () => page.click(`[data-testid="query-link"][data-table="api_calls"][data-id="${call}"]`), 'api_calls', call);
    await page.close();
  });
});
