// Reading a recording while the recorder writes it (issue 14). The
// recorder's own ingest follows a stream directory that a recorded stream
// is appended to in pieces cut anywhere, even inside a record
// (helpers/live-feed.ts, in a process of its own as a recorder is); this
// process reads the file meanwhile, as a viewer does.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syntheticStreamToolPath } from '../../profiler/native/paths.ts';
import { RecordingQuery } from '../../profiler/query/recording-query.ts';
import { ZONED_TABLES, type ZonedTable } from '../../profiler/store/zone-tables.ts';
import { benchLaunchRows, finishedRecordingProblems, startLiveFeed } from '../helpers/live-feed.ts';
import { requireFile, tempDir } from '../helpers/native.ts';

const LAUNCHES = 40_000;
let dir: string;
let stream: string;

beforeAll(() => {
  dir = tempDir('live');
  stream = path.join(dir, 'run.ssr');
  execFileSync(requireFile(syntheticStreamToolPath()), ['--out', stream, '--bench-launches', String(LAUNCHES), '--bench-period-ns', '60000']);
});
afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a recording read while it is written', () => {
  it('every snapshot a reader takes is whole: each row in its zones, each kernel after its launch', async () => {
    const file = path.join(dir, 'snapshots.sqlite');
    const feed = await startLiveFeed({ stream, out: file, chunks: 30, intervalMs: 150 });
    let finished = false;
    void feed.done.then(() => (finished = true));
    const db = new Database(file, { readonly: true, timeout: 10_000 });
    const seen = new Set<number>();
    const problems: string[] = [];
    try {
      while (!finished) {
        const snapshot = db.transaction(() => {
          const out: Record<string, { rows: number; zoned: number; maxId: number | null; lastZoned: number | null }> = {};
          for (const table of Object.keys(ZONED_TABLES) as ZonedTable[]) {
            const t = db.prepare(`SELECT count(*) AS rows, max(id) AS maxId FROM ${table}`).get() as { rows: number; maxId: number | null };
            const z = db
              .prepare('SELECT coalesce(sum(rows), 0) AS zoned, max(last_id) AS lastZoned FROM zones WHERE table_id = ?')
              .get(ZONED_TABLES[table].id) as {
              zoned: number;
              lastZoned: number | null;
            };
            out[table] = { ...t, ...z };
          }
          const corr = db.prepare('SELECT (SELECT max(correlation_id) FROM kernels) AS k, (SELECT max(correlation_id) FROM api_calls) AS a').get() as {
            k: number | null;
            a: number | null;
          };
          return { out, corr };
        })();
        for (const [table, c] of Object.entries(snapshot.out)) {
          if (c.rows !== c.zoned || c.maxId !== c.lastZoned) problems.push(`${table}: ${JSON.stringify(c)}`);
        }
        if (snapshot.corr.k !== null && !(snapshot.corr.a! >= snapshot.corr.k)) problems.push(`a kernel without its launch: ${JSON.stringify(snapshot.corr)}`);
        seen.add(snapshot.out.kernels!.rows);
        await sleep(20);
      }
    } finally {
      db.close();
    }
    expect(problems).toEqual([]);
    // It was read while it grew, many times.
    expect(seen.size).toBeGreaterThan(10);
    expect((await feed.done).complete).toBe(true);
    expect(finishedRecordingProblems(file, dir, benchLaunchRows(LAUNCHES))).toEqual([]);
  });

  it('the query side follows it: revisions, counts that only grow, live until finished, analyses at a bounded rate', async () => {
    const file = path.join(dir, 'query.sqlite');
    const feed = await startLiveFeed({ stream, out: file, chunks: 20, intervalMs: 250, startDelayMs: 300 });
    let finished = false;
    void feed.done.then(() => (finished = true));
    // Two readers: one may redo its analysis whenever the data grew, the other not within the test.
    const eager = new RecordingQuery('eager', file, { liveAnalysisMs: 0 });
    const lazy = new RecordingQuery('lazy', file, { liveAnalysisMs: 1e9 });
    try {
      const states = [];
      const eagerFindings = new Set<unknown>();
      const lazyFindings = new Set<unknown>();
      while (!finished) {
        const s = eager.recordingState();
        states.push(s);
        if (s.counts.kernels > 0) {
          eagerFindings.add(eager.findings({ kind: 'whole' }));
          const f = lazy.findings({ kind: 'whole' });
          // (Unless the recording was finished meanwhile: that deserves a new analysis.)
          if (lazy.recordingState().live) lazyFindings.add(f);
        }
        await sleep(100);
      }
      await feed.done;
      const last = eager.recordingState();
      expect(states[0]!.live).toBe(true);
      expect(last).toMatchObject({ live: false, complete: true, counts: { kernels: LAUNCHES, memcpys: Math.floor(LAUNCHES / 64) } });
      for (let i = 1; i < states.length; i++) {
        expect(states[i]!.revision).toBeGreaterThanOrEqual(states[i - 1]!.revision);
        expect(states[i]!.counts.kernels).toBeGreaterThanOrEqual(states[i - 1]!.counts.kernels);
        expect(states[i]!.endNs).toBeGreaterThanOrEqual(states[i - 1]!.endNs);
      }
      expect(new Set(states.map((s) => s.revision)).size).toBeGreaterThan(5);
      // The summary follows, without the warnings of an unfinished recording while it is written.
      expect(eager.summary().counts.kernels).toBe(LAUNCHES);
      // Analyses: redone as the data grew (eager), or the first one answered again (lazy) while it is written ...
      expect(eagerFindings.size).toBeGreaterThan(3);
      expect(lazyFindings.size).toBe(1);
      // ... and once it is finished, on the final data, whatever the rate.
      const final = lazy.findings({ kind: 'whole' });
      expect(lazyFindings.has(final)).toBe(false);
      expect(lazy.findings({ kind: 'whole' })).toBe(final);
    } finally {
      eager.close();
      lazy.close();
    }
  });

  it('a reader that holds the file longer than a commit may wait delays the recording, never breaks it', async () => {
    const file = path.join(dir, 'held.sqlite');
    const feed = await startLiveFeed({ stream, out: file, chunks: 12, intervalMs: 200 });
    const db = new Database(file, { readonly: true, timeout: 10_000 });
    try {
      await sleep(500);
      // A read transaction the ingest's commits cannot get past (its busy timeout is 5 s): held for 7 s.
      db.exec('BEGIN');
      const before = db.prepare('SELECT count(*) FROM kernels').pluck().get() as number;
      await sleep(7000);
      expect(db.prepare('SELECT count(*) FROM kernels').pluck().get()).toBe(before);
      db.exec('COMMIT');
    } finally {
      db.close();
    }
    const done = await feed.done;
    expect(done).toMatchObject({ complete: true, incompleteReason: null });
    expect(finishedRecordingProblems(file, dir, benchLaunchRows(LAUNCHES))).toEqual([]);
  }, 60_000);
});
