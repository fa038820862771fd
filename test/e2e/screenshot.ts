// Screenshots of a recording in the renderer (for docs/ and for looking at
// a timeline without a display), against the real server in Chromium:
//   node test/e2e/screenshot.ts RECORDING.sqlite OUT.png [options]
//     --gpu              zoom to the GPU work (first operation to last, 5% margin)
//     --range START:END  zoom to [START, END) ns since the recording origin
//     --select TABLE:ID  select an item (details panel, launch arrow), e.g. kernels:1
//     --search TEXT      search and highlight (e.g. a kernel name)
//     --stats            the Stats tab instead of the timeline
//     --scope KEY        the findings' and stats' scope: whole, range:NAME, range:NAME#k, window:START..END
//                        (default: the steady state; the shot waits for their answer)
//     --compare OTHER    the compare view: RECORDING (base) against OTHER.sqlite
//     --query SQL        the Query tab, SQL run (`example:N`: the N-th example query, from 1)
//     --size WxH         viewport in CSS pixels (default 1600x560)
import path from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { launch, serve, settled } from './browser.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    gpu: { type: 'boolean' },
    range: { type: 'string' },
    select: { type: 'string' },
    search: { type: 'string' },
    stats: { type: 'boolean' },
    compare: { type: 'string' },
    size: { type: 'string', default: '1600x560' },
    scope: { type: 'string' },
    query: { type: 'string' },
  },
});
const [file, out] = positionals;
if (!file || !out) {
  process.stderr.write(
    'usage: node test/e2e/screenshot.ts RECORDING.sqlite OUT.png [--gpu | --range START:END] [--select TABLE:ID] [--search TEXT] [--stats] [--query SQL|example:N] [--scope KEY] [--size WxH]\n',
  );
  process.exit(2);
}
const [width, height] = values.size!.split('x').map(Number) as [number, number];
const server = await serve([path.resolve(file), ...(values.compare ? [path.resolve(values.compare)] : [])]);
const browser = await launch();
try {
  const base = server.url.split('?')[0]!;
  const list = (await (await fetch(`${base}api/listRecordings`, { method: 'POST', headers: { 'x-streamscope-token': server.token }, body: '{}' })).json()) as {
    recordingId: string;
  }[];
  if (!list[0]) throw new Error(`${file} could not be opened: ${server.failed.map((f) => f.message).join('; ')}`);
  const hash = new URLSearchParams({ rec: list[0].recordingId });
  if (values.gpu) {
    const db = new Database(file, { readonly: true });
    const s = db
      .prepare(
        'SELECT min(s) AS s, max(e) AS e FROM (SELECT min(start_ns) s, max(end_ns) e FROM kernels UNION ALL SELECT min(start_ns), max(end_ns) FROM memcpys UNION ALL SELECT min(start_ns), max(end_ns) FROM memsets)',
      )
      .get() as { s: number; e: number };
    db.close();
    const pad = (s.e - s.s) * 0.05;
    hash.set('start', String(Math.round(s.s - pad)));
    hash.set('end', String(Math.round(s.e + pad)));
  } else if (values.range) {
    const [a, b] = values.range.split(':');
    hash.set('start', a!);
    hash.set('end', b!);
  }
  if (values.select) hash.set('sel', values.select);
  if (values.stats) hash.set('tab', 'stats');
  if (values.query) hash.set('tab', 'query');
  if (values.scope) hash.set('scope', values.scope);
  if (values.compare) {
    hash.set('tab', 'compare');
    hash.set('cmp', list.map((r) => r.recordingId).join(','));
  }
  const page = await browser.newPage({ viewport: { width, height } });
  await page.goto(`${server.url}#${hash}`);
  if (values.stats) await page.waitForSelector('[data-testid="stats-view"] [data-testid="stats-scope"][data-pending="false"]');
  else if (values.query) {
    const example = /^example:(\d+)$/.exec(values.query);
    if (example) await page.selectOption('[data-testid="query-examples"]', String(Number(example[1]) - 1));
    else {
      await page.fill('[data-testid="query-text"]', values.query);
      await page.click('[data-testid="query-run"]');
    }
    await page.waitForSelector('[data-testid="query-results"], [data-testid="query-error"]');
  } else if (values.compare) {
    await page.waitForSelector('[data-testid="diff-gpu-span"]');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="compare-lane"]').length >= 2 && (window.__streamscope?.dataFrames ?? 0) > 0);
    await settled(page);
  } else {
    await page.waitForFunction(() => (window.__streamscope?.dataFrames ?? 0) > 0);
    if (values.search) {
      await page.fill('[data-testid="search"]', values.search);
      await page.waitForFunction(() => /match/.test(document.querySelector('[data-testid="search-count"]')?.textContent ?? ''));
    }
    if (values.select) await page.waitForSelector('[data-testid="details"] [data-field="id"]');
    // The findings of the scope (and with them start-up and the iterations, asked at the same time).
    await page.waitForSelector('[data-testid="findings"][data-pending="false"]');
    // The first view narrows to the steady state once start-up is known (its band drawn); a recording without start-up has none.
    if (!values.gpu && !values.range)
      await page.waitForFunction(() => !!window.__streamscope?.rulers()[0]?.startup, undefined, { timeout: 5000 }).catch(() => {});
    await settled(page);
  }
  await page.screenshot({ path: out });
  process.stdout.write(`${out}\n`);
} finally {
  await browser.close();
  await server.close();
}
