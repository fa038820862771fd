// The query worker: the main process's data calls answered on another thread
// by profiler/query's session registry, on real H100 recordings.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RecordingHandle } from '../../profiler/contract/api.ts';
import { channelFor, dispatch } from '../../app/ipc.ts';
import { createMainApi } from '../../app/main-api.ts';
import { QueryClient } from '../../profiler/query/query-client.ts';
import { RecentFiles } from '../../app/recent-files.ts';
import { RecordJobs } from '../../app/record-jobs.ts';
import { addonPath } from '../../profiler/native/addon.ts';
import { tempDir } from '../helpers/native.ts';

const workerPath = new URL('../../profiler/query/query-worker.ts', import.meta.url);
const fixture = (name: string) => path.resolve(import.meta.dirname, `../fixtures/recordings/${name}.sqlite`);

const clients: QueryClient[] = [];
function client(): QueryClient {
  const c = new QueryClient({ workerPath });
  clients.push(c);
  return c;
}
afterAll(async () => {
  for (const c of clients) await c.terminate();
});

function desktopApi(query: QueryClient, saveAs: string | null = null) {
  const userData = tempDir('userdata');
  const recent = new RecentFiles(userData);
  const opened: RecordingHandle[] = [];
  const api = createMainApi({
    query,
    recent,
    jobs: new RecordJobs({ outputDir: path.join(userData, 'recordings'), cli: { command: process.execPath, args: [] }, open: (f) => api.openFile(f) }),
    version: '0.0.0-test',
    showOpenDialog: async () => [fixture('normalise-concurrent')],
    showSaveDialog: async () => saveAs,
    canRecord: async () => false,
    onOpened: (h) => opened.push(h),
    jobCacheDir: path.join(userData, 'jobs'),
  });
  return { api, recent, opened };
}

describe('query worker', () => {
  it('answers errors as ApiErrorShape, and the main thread stays free', async () => {
    const q = client();
    const r = await q.summary('no-such-recording').then(
      () => null,
      (e: unknown) => e,
    );
    expect(r).toMatchObject({ code: expect.any(String), message: expect.any(String) });
  });

  it('opens a real recording and answers summary, window, details, search, stats through IPC dispatch', async () => {
    const { api, recent, opened } = desktopApi(client());
    const file = fixture('normalise-concurrent');
    const open = await dispatch(api, channelFor('openRecording'), [file]);
    expect(open).toMatchObject({ ok: true, value: { recordingId: expect.any(String), name: 'normalise-concurrent.sqlite', path: file } });
    const id = (open as { value: RecordingHandle }).value.recordingId;
    expect(recent.list()).toEqual([file]);
    expect(opened.map((h) => h.recordingId)).toEqual([id]);

    const summary = await dispatch(api, channelFor('summary'), [id]);
    expect(summary.ok).toBe(true);
    const s = (summary as { value: import('../../profiler/contract/api.ts').RecordingSummary }).value;
    expect(s.counts.kernels).toBeGreaterThan(0);
    expect(s.streams.length).toBeGreaterThan(1);

    const rows = s.streams.map((st) => st.rowId);
    const win = await dispatch(api, channelFor('window'), [id, { rows, startNs: s.startNs, endNs: s.endNs, resolutionNs: 1 }]);
    expect(win.ok).toBe(true);
    const w = (win as { value: import('../../profiler/contract/api.ts').WindowResponse }).value;
    const item = w.rows.flatMap((r) => r.items)[0]!;
    expect(item).toBeDefined();

    const details = await dispatch(api, channelFor('details'), [id, item.ref]);
    expect(details).toMatchObject({ ok: true, value: { ref: item.ref } });
    expect((await dispatch(api, channelFor('search'), [id, { text: '', limit: 5 }])).ok).toBe(true);
    expect((await dispatch(api, channelFor('stats'), [id, { kind: 'steady-state' }])).ok).toBe(true);
    const list = await dispatch(api, channelFor('listRecordings'), []);
    expect(list).toMatchObject({ ok: true, value: [expect.objectContaining({ recordingId: id })] });

    // compare: the diff of two open recordings, computed on the worker.
    const other = (await dispatch(api, channelFor('openRecording'), [fixture('normalise-default-stream')])) as { value: RecordingHandle };
    const cmp = await dispatch(api, channelFor('compare'), [other.value.recordingId, id, { kind: 'steady-state' }]);
    expect(cmp).toMatchObject({ ok: true, value: { a: fixture('normalise-default-stream'), b: file } });
    const d = (cmp as { value: import('../../profiler/contract/api.ts').DiffSummary }).value;
    expect(d.gpuSpanNs.delta).toBeLessThan(0); // the concurrent run is the faster one
    expect(d.findings).toContainEqual(expect.objectContaining({ kind: 'legacy-default-stream', status: 'fixed' }));

    // closeRecording: the tab's recording is gone from the worker, the other stays.
    const otherId = other.value.recordingId;
    expect(await dispatch(api, channelFor('closeRecording'), [otherId])).toEqual({ ok: true, value: null });
    expect(await dispatch(api, channelFor('summary'), [otherId])).toMatchObject({ ok: false, error: { code: 'not-found' } });
    expect(await dispatch(api, channelFor('closeRecording'), [otherId])).toMatchObject({ ok: false, error: { code: 'not-found' } });
    const after = (await dispatch(api, channelFor('listRecordings'), [])) as { value: RecordingHandle[] };
    expect(after.value.map((h) => h.recordingId)).toEqual([id]);
    expect((await dispatch(api, channelFor('summary'), [id])).ok).toBe(true);
  });

  it('answers many window queries in flight at once, each as the main thread would', async () => {
    const q = client();
    const h = await q.openRecording(fixture('torch_streams'));
    const s = await q.summary(h.recordingId);
    const rows = [...s.streams.map((st) => st.rowId), ...s.processes.flatMap((p) => p.threads.flatMap((t) => [t.apiRowId, t.nvtxRowId]))];
    // 40 window queries (2000 pixels wide) in flight together come back, all
    // alike. How busy the main thread stays meanwhile depends on the
    // machine's speed and load: `npm run bench -- --only responsiveness`
    // measures it (bench/responsiveness.ts).
    const req = { rows, startNs: s.startNs, endNs: s.endNs, resolutionNs: (s.endNs - s.startNs) / 2000 };
    const answers = await Promise.all(Array.from({ length: 40 }, () => q.window(h.recordingId, req)));
    expect(answers[0]!.rows.flatMap((r) => r.items).length).toBeGreaterThan(0);
    for (const a of answers) expect(a).toEqual(answers[0]);
  });

  it('bad files come back with their codes; a vanished recent file leaves the list', async () => {
    const { api, recent } = desktopApi(client());
    const gone = path.join(tempDir('gone'), 'gone.sqlite');
    recent.add(gone);
    expect(await dispatch(api, channelFor('openRecording'), [gone])).toMatchObject({ ok: false, error: { code: 'not-found', file: gone } });
    expect(recent.list()).toEqual([]);
    const notRecording = path.join(tempDir('bad'), 'x.sqlite');
    fs.writeFileSync(notRecording, 'not sqlite at all, just text that is long enough to not be empty');
    expect(await dispatch(api, channelFor('openRecording'), [notRecording])).toMatchObject({ ok: false, error: { code: 'not-a-recording' } });
  });

  it('showOpenDialog opens what the dialog chose', async () => {
    const { api } = desktopApi(client());
    const r = await dispatch(api, channelFor('showOpenDialog'), []);
    expect(r).toMatchObject({ ok: true, value: { opened: [expect.objectContaining({ path: fixture('normalise-concurrent') })], failed: [] } });
  });
});

describe('the Electron build', () => {
  it('its query worker answers findings through the bundled analysis worker', async () => {
    // What electron-builder packs: the build of `npm run build:app` (the
    // analysis worker must be an entry of its own). Built outside the source
    // tree, under node_modules/.cache so that the bundle's external
    // better-sqlite3 still resolves; the addon is found as a packaged app
    // finds it, through STREAMSCOPE_ADDON_PATH.
    const root = path.resolve(import.meta.dirname, '../..');
    const outDir = path.join(root, 'node_modules/.cache/streamscope-test/app-build');
    execFileSync(
      process.execPath,
      [path.join(root, 'node_modules/vite/bin/vite.js'), 'build', '-c', 'app/vite.config.ts', '--outDir', outDir, '--emptyOutDir'],
      { cwd: root, stdio: 'pipe' },
    );
    expect(fs.existsSync(path.join(outDir, 'analysis-worker.cjs'))).toBe(true);
    const previous = process.env.STREAMSCOPE_ADDON_PATH;
    process.env.STREAMSCOPE_ADDON_PATH = addonPath();
    try {
      const c = new QueryClient({ workerPath: path.join(outDir, 'query-worker.cjs') });
      clients.push(c);
      const h = await c.openRecording(fixture('normalise-default-stream'));
      expect((await c.findings(h.recordingId, { kind: 'steady-state' })).map((f) => f.kind)).toContain('legacy-default-stream');
    } finally {
      if (previous === undefined) delete process.env.STREAMSCOPE_ADDON_PATH;
      else process.env.STREAMSCOPE_ADDON_PATH = previous;
    }
  }, 120_000);

  it("its CLI reads a job rank by rank on the bundled job worker (the build above's)", () => {
    const outDir = path.resolve(import.meta.dirname, '../../node_modules/.cache/streamscope-test/app-build');
    expect(fs.existsSync(path.join(outDir, 'job-worker.cjs'))).toBe(true);
    const r = spawnSync(process.execPath, [path.join(outDir, 'streamscope-cli.cjs'), 'report', fixture('nccl-serial-h200x2'), '--job'], {
      encoding: 'utf8',
      env: { ...process.env, STREAMSCOPE_ADDON_PATH: addonPath() },
    });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^job {7}2 ranks \(processes with GPU work\) read process by process, 3 parts on \d worker threads?/m);
  }, 60_000);
});

describe('File ▸ Export…', () => {
  it('writes the recording as Chrome trace JSON where the save dialog says; cancelled: null, nothing written', async () => {
    const out = path.join(tempDir('export'), 'run.json');
    const { api } = desktopApi(client(), out);
    const h = await api.openRecording(fixture('normalise-concurrent'));
    const r = await dispatch(api, channelFor('exportTrace'), [h.recordingId]);
    expect(r).toMatchObject({ ok: true, value: { path: out, events: expect.any(Number), flows: expect.any(Number) } });
    const { events, flows } = (r as { value: { events: number; flows: number } }).value;
    const trace = JSON.parse(fs.readFileSync(out, 'utf8')) as { traceEvents: { ph: string; cat?: string }[] };
    expect(trace.traceEvents.length).toBe(events);
    // Every kernel and copy of the recording, and a flow start per launch → GPU op.
    const kernels = trace.traceEvents.filter((e) => e.ph === 'X' && e.cat === 'kernel').length;
    expect(kernels).toBe(8);
    expect(trace.traceEvents.filter((e) => e.ph === 's').length).toBe(flows);

    const cancelled = desktopApi(client(), null).api;
    const h2 = await cancelled.openRecording(fixture('normalise-concurrent'));
    expect(await dispatch(cancelled, channelFor('exportTrace'), [h2.recordingId])).toEqual({ ok: true, value: null });
  });
});

describe('desktop capabilities', () => {
  it('electron mode, can open files; canRecord as probed', async () => {
    const { api } = desktopApi(client());
    expect(await api.capabilities()).toEqual({ mode: 'electron', version: '0.0.0-test', canOpenFiles: true, canRecord: false });
    expect(await dispatch(api, channelFor('recentFiles'), [])).toEqual({ ok: true, value: [] });
  });
});
