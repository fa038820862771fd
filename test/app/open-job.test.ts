// The desktop app opening several recordings at once (issue 13, part 2), as
// plain modules (Electron cannot start here): main-api's openRecordings and
// the open dialog's multi-select, through IPC dispatch and the real query
// worker, which merges one job's ranks into the app's job cache
// (userData/jobs) and opens the merged file; the recent list and the
// main → page events follow; failures come back named. The command line's
// --job / --separate. The per-rank recordings are CONSTRUCTED through
// RecordingWriter (test/helpers/rank-files.ts), each with its rank and host.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenResult, RecordingHandle, RecordingSummary } from '../../profiler/contract/api.ts';
import { filesFromArgs, openModeFromArgs } from '../../app/argv.ts';
import { channelFor, dispatch } from '../../app/ipc.ts';
import { createMainApi } from '../../app/main-api.ts';
import { QueryClient } from '../../profiler/query/query-client.ts';
import { RecentFiles } from '../../app/recent-files.ts';
import { RecordJobs } from '../../app/record-jobs.ts';
import { tempDir } from '../helpers/native.ts';
import { writeRankFiles } from '../helpers/rank-files.ts';

const fixture = (name: string) => path.resolve(import.meta.dirname, `../fixtures/recordings/${name}.sqlite`);
const workerPath = new URL('../../profiler/query/query-worker.ts', import.meta.url);
let dir: string;
let ranks: string[];
const clients: QueryClient[] = [];
beforeAll(() => {
  dir = tempDir('open-job');
  fs.mkdirSync(path.join(dir, 'inputs'));
  ranks = writeRankFiles(path.join(dir, 'inputs'), 'run', 3, { perHost: 1 });
});
afterAll(async () => {
  for (const c of clients) await c.terminate();
  fs.rmSync(dir, { recursive: true, force: true });
});

function desktop(dialog: string[] | null = null) {
  const query = new QueryClient({ workerPath });
  clients.push(query);
  const userData = fs.mkdtempSync(path.join(dir, 'userdata-'));
  const recent = new RecentFiles(userData);
  const opened: RecordingHandle[] = [];
  const api = createMainApi({
    query,
    recent,
    jobs: new RecordJobs({ outputDir: path.join(userData, 'recordings'), cli: { command: process.execPath, args: [] }, open: (f) => api.openFile(f) }),
    version: '0.0.0-test',
    showOpenDialog: async () => dialog,
    showSaveDialog: async () => null,
    canRecord: async () => false,
    onOpened: (h) => opened.push(h),
    jobCacheDir: path.join(userData, 'jobs'),
  });
  return { api, recent, opened, jobs: path.join(userData, 'jobs') };
}

describe('several recordings at once in the desktop app', () => {
  it("a drop of one job's ranks: merged on the worker into userData/jobs, opened as one recording, added to the recent list", async () => {
    const { api, recent, opened, jobs } = desktop();
    const r = await dispatch(api, channelFor('openRecordings'), [[ranks[2], ranks[0], ranks[1]]]);
    expect(r.ok).toBe(true);
    const result = (r as { value: OpenResult }).value;
    expect(result.failed).toEqual([]);
    expect(result.opened).toHaveLength(1);
    const job = result.opened[0]!;
    expect(path.dirname(job.path)).toBe(jobs);
    expect(opened).toEqual([job]);
    expect(recent.list()).toEqual([job.path]);
    const s = (await dispatch(api, channelFor('summary'), [job.recordingId])) as { ok: true; value: RecordingSummary };
    expect(s.value.job?.sources.map((x) => x.file)).toEqual(ranks);
    expect(s.value.processes.map((p) => p.rank).sort()).toEqual([0, 1, 2]);
    // The same files again (the recent list's job, or a second drop): the cached file, the same recording.
    const again = (await dispatch(api, channelFor('openRecordings'), [ranks])) as { ok: true; value: OpenResult };
    expect(again.value.opened).toEqual([job]);
    expect(fs.readdirSync(jobs)).toEqual([path.basename(job.path)]);
  });

  it('the open dialog with several files chosen: the job and a recording of no job, and a file that is not a recording named', async () => {
    const bad = path.join(dir, 'notes.sqlite');
    fs.writeFileSync(bad, 'not a database');
    const lone = fixture('normalise-concurrent');
    const { api, recent, opened } = desktop([ranks[0]!, ranks[1]!, lone, bad]);
    const r = (await dispatch(api, channelFor('showOpenDialog'), [])) as { ok: true; value: OpenResult };
    expect(r.value.opened.map((h) => h.name)).toEqual([expect.stringMatching(/^run-rank0-job-of-2-[0-9a-f]{16}\.sqlite$/), 'normalise-concurrent.sqlite']);
    expect(r.value.failed).toEqual([{ file: bad, code: 'not-a-recording', message: expect.stringContaining(`${bad}: not a SQLite database`) }]);
    expect(opened).toEqual(r.value.opened);
    expect(recent.list()).toEqual([lone, r.value.opened[0]!.path]);
  });

  it("a recent file that is gone leaves the list; --separate opens a job's ranks one by one", async () => {
    const { api, recent } = desktop();
    const gone = path.join(dir, 'gone.sqlite');
    recent.add(gone);
    const r = await api.openPaths([gone, ranks[0]!, ranks[1]!], 'separate');
    expect(r.opened.map((h) => h.path)).toEqual([ranks[0], ranks[1]]);
    expect(r.failed).toEqual([expect.objectContaining({ file: gone, code: 'not-found' })]);
    expect(recent.list()).toEqual([ranks[1], ranks[0]]);
  });
});

describe('the command line', () => {
  it("--job and --separate say how the files open; neither: one job's ranks as one", () => {
    expect(openModeFromArgs(['open', 'a.sqlite', 'b.sqlite'])).toBe('auto');
    expect(openModeFromArgs(['open', '--job', 'a.sqlite', 'b.sqlite'])).toBe('job');
    expect(openModeFromArgs(['--separate', 'a.sqlite'])).toBe('separate');
    // After `--`, a file named like a switch.
    expect(openModeFromArgs(['open', '--', '--job'])).toBe('auto');
    expect(filesFromArgs(['open', '--job', 'a.sqlite'], '/w')).toEqual(['/w/a.sqlite']);
  });
});
