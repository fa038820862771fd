// The API's sql() as the desktop app answers it: through IPC dispatch (the
// arguments checked), the main API and the real query worker, which runs
// queries on a thread of their own — a query at its time limit holds up
// neither the timeline's windows nor the findings.
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { SqlAnswer } from '../../profiler/contract/sql.ts';
import { channelFor, dispatch } from '../../app/ipc.ts';
import { createMainApi } from '../../app/main-api.ts';
import { QueryClient } from '../../profiler/query/query-client.ts';
import { RecentFiles } from '../../app/recent-files.ts';
import { RecordJobs } from '../../app/record-jobs.ts';
import { SqlConsole } from '../../profiler/query/sql-console.ts';
import { tempDir } from '../helpers/native.ts';

const workerPath = new URL('../../profiler/query/query-worker.ts', import.meta.url);
const file = path.resolve(import.meta.dirname, '../fixtures/recordings/normalise-concurrent.sqlite');
const query = new QueryClient({ workerPath });
afterAll(() => query.terminate());

const userData = tempDir('sql-app');
const api = createMainApi({
  query,
  recent: new RecentFiles(userData),
  jobs: new RecordJobs({ outputDir: path.join(userData, 'recordings'), cli: { command: process.execPath, args: [] }, open: (f) => api.openFile(f) }),
  version: '0.0.0-test',
  showOpenDialog: async () => null,
  showSaveDialog: async () => null,
  canRecord: async () => false,
  jobCacheDir: path.join(userData, 'jobs'),
});

const call = (method: 'sql' | 'summary' | 'findings' | 'window' | 'openRecording', ...args: unknown[]) => dispatch(api, channelFor(method), args);

describe('sql() in the desktop app', () => {
  it('answers what the console answers, through IPC', async () => {
    const opened = await call('openRecording', file);
    const id = (opened as { ok: true; value: { recordingId: string } }).value.recordingId;
    const q = 'SELECT kernel_id, name, stream, duration_us FROM kernel_view ORDER BY kernel_id';
    const r = (await call('sql', id, { query: q, rowLimit: 5 })) as { ok: true; value: SqlAnswer };
    expect(r.ok).toBe(true);
    const direct = new SqlConsole(file);
    try {
      const want = direct.run(q, { rowLimit: 5 });
      expect(r.value).toEqual({ ...want, elapsedMs: expect.any(Number) });
      expect(r.value.ok && [r.value.rows.length, r.value.truncated]).toEqual([5, true]);
    } finally {
      direct.close();
    }
    // A refusal is an answer, not an error of the call.
    const refused = (await call('sql', id, { query: 'DELETE FROM kernels' })) as { ok: true; value: SqlAnswer };
    expect(refused.value).toMatchObject({ ok: false, problem: 'refused' });
  });

  it('checks the arguments before anything runs', async () => {
    const opened = (await call('openRecording', file)) as { ok: true; value: { recordingId: string } };
    const id = opened.value.recordingId;
    for (const [request, message] of [
      [{ query: 'SELECT 1', rowLimit: 0 }, /sql: request.rowLimit must be in \[1, 10000\]/],
      [{ query: 'SELECT 1', timeoutMs: 120_000 }, /sql: request.timeoutMs must be in \[1, 60000\]/],
      [{ query: 'SELECT 1', readonly: false }, /sql: request has an unknown field 'readonly'/],
      [{ query: 42 }, /sql: request.query must be a string/],
      [{}, /sql: request.query is missing/],
    ] as const) {
      const r = await call('sql', id, request);
      expect(r.ok).toBe(false);
      expect((r as { ok: false; error: { code: string; message: string } }).error).toMatchObject({
        code: 'bad-request',
        message: expect.stringMatching(message),
      });
    }
  });

  it('runs on a thread of its own: the timeline and the findings are answered while a query runs to its limit', async () => {
    const opened = (await call('openRecording', file)) as { ok: true; value: { recordingId: string } };
    const id = opened.value.recordingId;
    let sqlDone = false;
    const runaway = call('sql', id, { query: 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c', timeoutMs: 3000 }).then(
      (r) => {
        sqlDone = true;
        return r;
      },
    );
    const summary = await call('summary', id);
    expect(summary.ok).toBe(true);
    const findings = await call('findings', id, { kind: 'whole' });
    expect(findings.ok).toBe(true);
    expect(sqlDone).toBe(false);
    const r = (await runaway) as { ok: true; value: SqlAnswer };
    expect(r.value).toMatchObject({ ok: false, problem: 'timeout' });
    expect((r.value as { message: string }).message).toContain(`${file}: the query ran longer than 3 s and was stopped`);
    // And the next query runs.
    const next = (await call('sql', id, { query: 'SELECT count(*) AS n FROM kernels' })) as { ok: true; value: SqlAnswer };
    expect(next.value.ok).toBe(true);
  });
});
