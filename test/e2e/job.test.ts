/// <reference lib="dom" />
// Multi-rank jobs in Debian's Chromium against the real server (issue 13,
// parts 1 and 2): the timeline groups a job host → rank → GPU → streams,
// each host and rank foldable, a folded rank one GPU-busy row, a job of
// many ranks opening folded; and several recordings given to `serve` open
// as one job, merged into a cache, with its alignment shown and its
// problems named.
//
// The per-rank recordings are CONSTRUCTED (test/helpers/rank-files.ts:
// written through RecordingWriter, not recorded on GPUs), each its
// process's rank as torchrun sets it and its host; the jobs are made of
// them by the real merge (profiler/merge). What the page shows is checked against SQL on
// the merged file. The torchrun fixtures are real recordings with ranks.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobHeadline } from '../../profiler/contract/job.ts';
import { mergeRecordings } from '../../profiler/merge/merge.ts';
import type { RunningServer } from '../../profiler/serve/server.ts';
import { startServer } from '../../profiler/serve/server.ts';
import { readSources } from '../../profiler/store/sources.ts';
import { writeRankFiles } from '../helpers/rank-files.ts';
import { tempDir } from '../helpers/native.ts';
import { box, buildRenderer, callApi, inkInRow, launch, openApp, rendererDist, serve, settled } from './browser.ts';

const fixtures = path.resolve(import.meta.dirname, '../fixtures/recordings');
const dir = tempDir('e2e-job');
const inputs = path.join(dir, 'inputs');
const cacheDir = path.join(dir, 'cache');

function sql<T>(file: string, query: string, ...args: unknown[]): T[] {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare(query).all(...args) as T[];
  } finally {
    db.close();
  }
}

let browser: Browser;
let server: RunningServer;
let ids: Record<string, string>;
let job4: string;
let job12: string;
let rank4: string[];
beforeAll(async () => {
  fs.mkdirSync(inputs, { recursive: true });
  rank4 = writeRankFiles(inputs, 'four', 4);
  job4 = path.join(dir, 'four.sqlite');
  mergeRecordings(rank4, job4);
  job12 = path.join(dir, 'twelve.sqlite');
  mergeRecordings(writeRankFiles(inputs, 'twelve', 12), job12);
  [browser, server] = await Promise.all([
    launch(),
    serve([job4, job12, path.join(fixtures, 'torchrun-node.sqlite'), path.join(fixtures, 'normalise-concurrent.sqlite')]),
  ]);
  const list = await callApi<{ recordingId: string; name: string }[]>(server, 'listRecordings');
  ids = Object.fromEntries(list.map((r) => [r.name, r.recordingId]));
}, 180_000);
afterAll(async () => {
  await server?.close();
  await browser?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const at = (file: string, extra = '') => `${server.url}#rec=${ids[path.basename(file)]}${extra}`;

interface RankRow {
  pid: number;
  rank: number;
  host: string;
  shownPid: number;
}
const ranksOf = (file: string) =>
  sql<RankRow>(file, 'SELECT pid, rank, host, coalesce(original_pid, pid) AS shownPid FROM processes WHERE rank IS NOT NULL ORDER BY rank');

describe('a merged job on the timeline', () => {
  it('groups host → rank → GPU → streams, labelled by rank, host and pid; every stream under its own rank', async () => {
    const page = await openApp(browser, at(job4));
    const ranks = ranksOf(job4);
    expect(ranks.map((r) => r.rank)).toEqual([0, 1, 2, 3]);
    // Two hosts, two ranks each, in rank order.
    for (const host of ['node-0', 'node-1']) {
      const label = await page.locator(`[data-testid="group-host:${host}"]`).textContent();
      expect(label).toContain(`host ${host}`);
      expect(label).toContain('2 ranks');
    }
    const tops: number[] = [];
    for (const r of ranks) {
      const label = await page.locator(`[data-testid="group-proc:${r.pid}"]`).textContent();
      // The pid it had on its host (4242 on every rank), though merge renumbered all but the first.
      expect(label).toContain(`rank ${r.rank} · ${r.host} · pid 4242`);
      expect(label).toContain(`local rank ${r.rank % 2}`);
      expect(label).toContain('GPU 0');
      tops.push((await box(page, `group-proc:${r.pid}`)).top);
      // Its host's group is above it.
      expect((await box(page, `group-host:${r.host}`)).top).toBeLessThan(tops.at(-1)!);
    }
    expect(tops).toEqual([...tops].sort((a, b) => a - b));
    expect(new Set(ranks.map((r) => r.shownPid))).toEqual(new Set([4242]));
    // Each stream with work is a row between its rank's header and the next rank's.
    const streams = sql<{ id: number; pid: number }>(job4, 'SELECT s.id, s.pid FROM streams s WHERE s.id IN (SELECT stream_id FROM kernels) ORDER BY s.id');
    expect(streams.length).toBe(8);
    expect(await page.locator('[data-testid^="row-stream:"]').count()).toBe(streams.length);
    for (const st of streams) {
      const i = ranks.findIndex((r) => r.pid === st.pid);
      const y = (await box(page, `row-stream:${st.id}`)).top;
      expect(y, `stream ${st.id} of rank ${ranks[i]!.rank}`).toBeGreaterThan(tops[i]!);
      if (i + 1 < tops.length) expect(y).toBeLessThan(tops[i + 1]!);
      // Under its rank, in a GPU group of that rank.
      const gpu = await page.locator(`[data-testid^="group-gpu:${st.pid}:"]`).count();
      expect(gpu).toBe(1);
    }
    // Four ranks: nothing folded at first, no busy rows.
    expect(await page.locator('[data-testid^="row-busy:"]').count()).toBe(0);
    await page.close();
  });

  it('a rank folds to one GPU-busy row drawn from its work; a host folds its ranks away; both unfold', async () => {
    const page = await openApp(browser, at(job4));
    const [, r1] = ranksOf(job4);
    const streamsOf = (pid: number) => sql<{ id: number }>(job4, 'SELECT id FROM streams WHERE pid = ? AND id IN (SELECT stream_id FROM kernels)', pid);
    await page.click(`[data-testid="fold-proc:${r1!.pid}"]`);
    for (const st of streamsOf(r1!.pid)) expect(await page.locator(`[data-testid="row-stream:${st.id}"]`).count()).toBe(0);
    expect(await page.locator(`[data-testid="row-api:${r1!.pid}:4242"]`).count()).toBe(0);
    const busy = page.locator(`[data-testid="row-busy:${r1!.pid}"]`);
    expect(await busy.count()).toBe(1);
    expect(await busy.textContent()).toContain('GPU busy');
    expect(await page.locator(`[data-testid="group-proc:${r1!.pid}"]`).textContent()).toMatch(/\d+ rows folded/);
    // The other ranks keep their streams.
    expect(await page.locator('[data-testid^="row-stream:"]').count()).toBe(6);
    await settled(page);
    // The busy row is drawn: its band holds the rank's kernels, from the zones.
    expect(await inkInRow(page, `row-busy:${r1!.pid}`)).toBeGreaterThan(50);

    await page.click('[data-testid="fold-host:node-0"]');
    expect(await page.locator('[data-testid="group-host:node-0"]').textContent()).toContain('2 ranks folded');
    expect(await page.locator(`[data-testid="group-proc:${r1!.pid}"]`).count()).toBe(0);
    expect(await page.locator(`[data-testid="row-busy:${r1!.pid}"]`).count()).toBe(0);
    expect(await page.locator('[data-testid^="row-stream:"]').count()).toBe(4);
    await page.click('[data-testid="fold-host:node-0"]');
    await page.click(`[data-testid="fold-proc:${r1!.pid}"]`);
    expect(await page.locator('[data-testid^="row-stream:"]').count()).toBe(8);
    expect(await page.locator('[data-testid^="row-busy:"]').count()).toBe(0);
    await page.close();
  });

  it('a job of 12 ranks opens with its ranks folded: 12 busy rows and no stream row; one unfolds; the folds survive a reload', async () => {
    const page = await openApp(browser, at(job12));
    const ranks = ranksOf(job12);
    expect(ranks.length).toBe(12);
    expect(await page.locator('[data-testid^="row-busy:"]').count()).toBe(12);
    expect(await page.locator('[data-testid^="row-stream:"]').count()).toBe(0);
    expect(await page.locator('[data-testid^="row-api:"]').count()).toBe(0);
    await settled(page);
    // Every rank worked: each busy row has ink.
    for (const r of [ranks[0]!, ranks[11]!]) expect(await inkInRow(page, `row-busy:${r.pid}`), `rank ${r.rank}`).toBeGreaterThan(50);
    // The window asked for no stream row at all: the status line counts no operation loaded.
    expect(await page.locator('[data-testid="status"]').textContent()).toContain(' 0 ops,');
    const r7 = ranks[7]!;
    await page.click(`[data-testid="fold-proc:${r7.pid}"]`);
    const own = sql<{ id: number }>(job12, 'SELECT id FROM streams WHERE pid = ? AND id IN (SELECT stream_id FROM kernels)', r7.pid);
    expect(await page.locator('[data-testid^="row-stream:"]').count()).toBe(own.length);
    for (const st of own) {
      const y = (await box(page, `row-stream:${st.id}`)).top;
      expect(y).toBeGreaterThan((await box(page, `group-proc:${r7.pid}`)).top);
      expect(y).toBeLessThan((await box(page, `group-proc:${ranks[8]!.pid}`)).top);
    }
    expect(await page.locator('[data-testid^="row-busy:"]').count()).toBe(11);
    await page.waitForFunction((pid) => {
      // The ranks still folded (each rank's CPU threads stay folded too).
      const fold = (new URLSearchParams(location.hash.slice(1)).get('fold') ?? '').split(',').filter((id) => id.startsWith('proc:'));
      return fold.length === 11 && !fold.includes(`proc:${pid}`);
    }, r7.pid);
    await page.reload();
    await page.waitForFunction(() => (window.__streamscope?.dataFrames ?? 0) > 0);
    expect(await page.locator('[data-testid^="row-busy:"]').count()).toBe(11);
    expect(await page.locator('[data-testid^="row-stream:"]').count()).toBe(own.length);
    await page.close();
  });

  it('a real torchrun recording (one recorder per node) groups its rank under its host; its launcher is a process beside it', async () => {
    const file = path.join(fixtures, 'torchrun-node.sqlite');
    const page = await openApp(browser, at(file));
    const procs = sql<{ pid: number; rank: number | null; host: string }>(file, 'SELECT pid, rank, host FROM processes ORDER BY pid');
    const ranked = procs.find((p) => p.rank !== null)!;
    const launcher = procs.find((p) => p.rank === null)!;
    expect(await page.locator(`[data-testid="group-host:${ranked.host}"]`).textContent()).toContain('1 rank · 1 other process');
    expect(await page.locator(`[data-testid="group-proc:${launcher.pid}"]`).textContent()).toContain(`Process ${launcher.pid}`);
    expect(await page.locator(`[data-testid="group-proc:${ranked.pid}"]`).textContent()).toContain(`rank ${ranked.rank} · ${ranked.host} · pid ${ranked.pid}`);
    const streams = sql<{ id: number }>(file, 'SELECT DISTINCT stream_id AS id FROM kernels');
    const rankTop = (await box(page, `group-proc:${ranked.pid}`)).top;
    for (const st of streams) expect((await box(page, `row-stream:${st.id}`)).top).toBeGreaterThan(rankTop);
    await page.close();
  });

  it('a single-process recording without a rank keeps its flat groups: no host or rank level', async () => {
    const file = path.join(fixtures, 'normalise-concurrent.sqlite');
    const page = await openApp(browser, at(file));
    expect(await page.locator('[data-testid^="group-host:"]').count()).toBe(0);
    expect(await page.locator('[data-testid="group-gpu:1"]').count()).toBe(1);
    expect(await page.locator('[data-testid^="group-proc:"]').count()).toBe(1);
    expect(await page.locator('[data-testid="job-info"]').count()).toBe(0);
    await page.close();
  });
});

describe('several recordings served as one job', () => {
  const digest = (f: string) => crypto.createHash('sha256').update(fs.readFileSync(f)).digest('hex');

  it('are merged into the cache (never beside them), shown with their alignment, and reused when served again', async () => {
    buildRenderer();
    const before = new Map(rank4.map((f) => [f, digest(f)]));
    const listing = fs.readdirSync(inputs).sort();
    const open = () => startServer({ files: [rank4[2]!, rank4[0]!, rank4[3]!, rank4[1]!], port: 0, staticDir: rendererDist, jobCacheDir: cacheDir });
    const s = await open();
    let jobPath: string;
    try {
      const list = await callApi<{ recordingId: string; path: string }[]>(s, 'listRecordings');
      expect(list.length).toBe(1);
      jobPath = list[0]!.path;
      expect(path.dirname(jobPath)).toBe(cacheDir);
      // Merged in rank order whatever order they were given in: rank 0's clock is the reference.
      const sources = sql<{ file: string; clock: string }>(jobPath, 'SELECT file, clock FROM sources ORDER BY id');
      expect(sources.map((x) => x.file)).toEqual(rank4);
      expect(sources.map((x) => x.clock)).toEqual(['reference', 'collectives', 'collectives', 'collectives']);

      const page = await openApp(browser, s.url);
      const db = new Database(jobPath, { readonly: true });
      const want = jobHeadline({ sources: readSources(db) });
      db.close();
      const headline = await page.locator('[data-testid="job-headline"]').textContent();
      expect(headline).toBe(want);
      expect(headline).toMatch(/^4 recordings merged as one job, clocks aligned by NCCL collectives, residual \d/);
      await page.click('[data-testid="job-sources-toggle"]');
      const rows = page.locator('[data-testid="job-sources"] tr');
      expect(await rows.count()).toBe(4);
      expect(await rows.nth(0).textContent()).toContain('four-rank0.sqlite');
      expect(await rows.nth(0).textContent()).toContain('reference clock');
      expect(await rows.nth(2).textContent()).toContain('node-1');
      expect(await rows.nth(2).textContent()).toMatch(/aligned by NCCL collectives, corrected [+−]/);
      // Its ranks grouped as any merged job's.
      expect(await page.locator('[data-testid^="group-host:"]').count()).toBe(2);
      expect(await page.locator('[data-testid="error-banner"]').count()).toBe(0);
      await page.close();
    } finally {
      await s.close();
    }
    // The user's files: not one byte changed, nothing written beside them.
    for (const [f, d] of before) expect(digest(f), f).toBe(d);
    expect(fs.readdirSync(inputs).sort()).toEqual(listing);
    // Served again: the same merged file, not merged again.
    const inode = fs.statSync(jobPath).ino;
    let reused = false;
    const again = await startServer({ files: rank4, port: 0, staticDir: rendererDist, jobCacheDir: cacheDir, onJob: (j) => (reused = j.reused) });
    try {
      expect((await callApi<{ path: string }[]>(again, 'listRecordings')).map((h) => h.path)).toEqual([jobPath]);
      expect(reused).toBe(true);
      expect(fs.statSync(jobPath).ino).toBe(inode);
      expect(fs.readdirSync(cacheDir)).toEqual([path.basename(jobPath)]);
    } finally {
      await again.close();
    }
  });

  it('a file that is not a recording, and a rank whose clock cannot be aligned, are named in banners; the rest opens as one job', async () => {
    const bad = path.join(inputs, 'notes.sqlite');
    fs.writeFileSync(bad, 'this is not a database');
    const [lone] = writeRankFiles(inputs, 'partial', 4, { ranks: [2], withoutCollectives: [2] });
    const files = [rank4[0]!, rank4[1]!, bad, lone!];
    const s = await startServer({ files, port: 0, staticDir: rendererDist, jobCacheDir: cacheDir });
    try {
      expect((await callApi<unknown[]>(s, 'listRecordings')).length).toBe(1);
      const page = await openApp(browser, s.url);
      const error = page.locator('[data-testid="error-banner"]');
      await error.waitFor();
      expect(await error.textContent()).toContain(bad);
      expect(await error.textContent()).toContain('Not a StreamScope recording');
      const warning = page.locator('[data-testid="warning-banner"]', { hasText: 'clock not aligned' });
      await warning.waitFor();
      expect(await warning.textContent()).toContain('partial-rank2.sqlite (host node-1): no NCCL collective matched');
      expect(await page.locator('[data-testid="job-headline"]').textContent()).toMatch(
        /^3 recordings merged as one job, clocks: 1 aligned by NCCL collectives, 1 as recorded/,
      );
      await page.close();
    } finally {
      await s.close();
    }
  });

  it('recordings that cannot be merged: one banner names the file and why, nothing half-merged is left', async () => {
    // Rank 0's recording under another name and rank: the same recording twice, which merge refuses.
    const copy = path.join(inputs, 'copy-of-rank0.sqlite');
    fs.copyFileSync(rank4[0]!, copy);
    const db = new Database(copy);
    db.prepare("UPDATE process_env SET value = '3' WHERE name IN ('RANK', 'LOCAL_RANK')").run();
    db.prepare('UPDATE processes SET rank = 3, local_rank = 3').run();
    db.close();
    const emptyCache = path.join(dir, 'cache-refused');
    // Beside them a recording of no job, which opens alone (browser mode shows what failed with what opened).
    const other = path.join(fixtures, 'normalise-concurrent.sqlite');
    const s = await startServer({ files: [rank4[0]!, copy, other], port: 0, staticDir: rendererDist, jobCacheDir: emptyCache });
    try {
      expect(s.failed).toEqual([expect.objectContaining({ code: 'not-mergeable', file: copy })]);
      expect((await callApi<{ path: string }[]>(s, 'listRecordings')).map((h) => h.path)).toEqual([other]);
      const page = await openApp(browser, s.url);
      const error = page.locator('[data-testid="error-banner"]');
      await error.waitFor();
      expect(await error.textContent()).toContain('Recordings cannot be opened as one job');
      expect(await error.textContent()).toContain(copy);
      expect(await error.textContent()).toMatch(/holds the same recording as .*four-rank0\.sqlite/);
      await page.close();
    } finally {
      await s.close();
    }
    expect(fs.readdirSync(emptyCache)).toEqual([]);
  });
});
